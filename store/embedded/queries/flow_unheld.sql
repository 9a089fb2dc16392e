-- ?1 run.
UPDATE run_flow SET held = 0 WHERE run_id = ?1
