-- The journal of one run from entry $2 on: what a resumed parked pass has not seen. At most $3
-- entries (the resume's window plus one, which tells it whether more follow; NULL: all).
SELECT run_id, seq, key, kind, status, output, error, attempt, wake_at, coalesce(event, ''), match, event_id, started_at, completed_at
FROM steps WHERE run_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3
