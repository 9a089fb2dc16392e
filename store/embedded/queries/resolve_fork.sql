-- Ends a parent's parallel step if it still waits. ?1 parent, ?2 key, ?3 status, ?4 output or
-- null, ?5 error or null, ?6 now.
UPDATE steps SET status = ?3, output = ?4, error = ?5, completed_at = ?6
WHERE run_id = ?1 AND key = ?2 AND kind = 'parallel' AND status = 'waiting'
