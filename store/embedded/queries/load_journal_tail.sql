-- The journal of run ?1 from entry ?2 on: what a resumed parked pass has not seen.
SELECT run_id, seq, key, kind, status, output, error, attempt, wake_at, coalesce(event, ''), match, event_id, started_at, completed_at
FROM steps WHERE run_id = ?1 AND seq >= ?2 ORDER BY seq
