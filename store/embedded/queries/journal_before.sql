-- The journal of run ?1 before entry ?2: the prefix a claim with a snapshot left out.
SELECT run_id, seq, key, kind, status, output, error, attempt, wake_at, coalesce(event, ''), match, event_id, started_at, completed_at
FROM steps WHERE run_id = ?1 AND seq < ?2 ORDER BY seq
