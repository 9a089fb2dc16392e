-- The journal of run ?1 from entry ?2 on: a claim's from its snapshot on, or what a resumed
-- parked pass has not seen. At most ?3 entries (a window plus one, which tells whether more
-- follow; -1: all of them).
SELECT run_id, seq, key, kind, status, output, error, attempt, wake_at, coalesce(event, ''), match, event_id, started_at, completed_at
FROM steps WHERE run_id = ?1 AND seq >= ?2 ORDER BY seq LIMIT ?3
