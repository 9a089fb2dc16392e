-- ?1 run, ?2 key, ?3 payload, ?4 event id, ?5 now.
UPDATE steps SET status = 'completed', output = ?3, event_id = ?4, completed_at = ?5
WHERE run_id = ?1 AND key = ?2 AND status = 'waiting'
