UPDATE steps SET status = 'timed_out', output = '{"timeout":true}', completed_at = $3
WHERE run_id = $1 AND key = $2 AND status = 'waiting'
