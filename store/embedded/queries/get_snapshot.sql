-- A claimed run's snapshot, by its key. ?1 run.
SELECT seq, last_key, code, data, created_at FROM snapshots WHERE run_id = ?1
