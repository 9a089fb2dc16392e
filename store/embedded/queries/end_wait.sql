-- TimeoutWait and CancelWait: end the step if it still waits. ?1 run, ?2 key, ?3 completed at,
-- ?4 status (timed_out or cancelled), ?5 output (the timeout's) or null, ?6 error (the
-- cancellation's) or null.
UPDATE steps SET status = ?4, output = ?5, error = ?6, completed_at = ?3
WHERE run_id = ?1 AND key = ?2 AND status = 'waiting'
