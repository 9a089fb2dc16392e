-- A run's link to its parent, whatever its tenant (the caller holds the run). ?1 run.
SELECT parent_run_id, parent_key, parent_close, awaited FROM run_parents WHERE run_id = ?1
