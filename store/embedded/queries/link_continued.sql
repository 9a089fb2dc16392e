-- Links an ended run to the run continuing it (FinishAndContinue). ?1 ended run, ?2 the new run.
UPDATE runs SET continued_as = ?2 WHERE id = ?1
