-- Moves the events signalled to an ended run that no wait took to the run continuing it
-- (FinishAndContinue). ?1 ended run, ?2 the new run.
UPDATE events SET run_id = ?2 WHERE run_id = ?1
