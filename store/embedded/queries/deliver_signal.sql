-- ?1 run, ?2 key, ?3 payload, ?4 now.
UPDATE steps SET status = 'completed', output = ?3, completed_at = ?4
WHERE run_id = ?1 AND key = ?2
