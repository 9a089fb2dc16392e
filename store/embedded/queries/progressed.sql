-- Journal progress: the run's fault count starts again. ?1 run.
UPDATE runs SET faults = 0, last_fault = NULL WHERE id = ?1 AND faults > 0
