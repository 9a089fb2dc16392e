-- Resolves the run's first waiting step that the event matches.
UPDATE steps s
SET status = 'completed', output = $3, completed_at = now()
WHERE (s.run_id, s.key) = (
    SELECT w.run_id, w.key FROM steps w
    WHERE w.run_id = $1 AND w.status = 'waiting' AND w.event = $2
      AND (w.match IS NULL OR $3::jsonb @> w.match)
    ORDER BY w.seq
    LIMIT 1)
  AND s.status = 'waiting'
RETURNING s.key
