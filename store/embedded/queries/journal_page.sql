-- A page of the journal of run ?1 from entry ?2 on: at most ?3 entries (the page plus one,
-- which tells whether more follow). JournalPage runs it after fence_get, in one read
-- transaction.
SELECT run_id, seq, key, kind, status, output, error, attempt, wake_at, coalesce(event, ''), match, event_id, started_at, completed_at
FROM steps WHERE run_id = ?1 AND seq >= ?2 ORDER BY seq LIMIT ?3
