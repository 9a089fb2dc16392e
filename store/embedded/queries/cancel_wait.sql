-- ?1 run, ?2 key, ?3 completed at, ?4 the cancellation's error.
UPDATE steps SET status = 'cancelled', error = ?4, completed_at = ?3
WHERE run_id = ?1 AND key = ?2 AND status = 'waiting'
