-- A page of a run's journal: the entries from seq ?3 on, at most ?4.
SELECT run_id, seq, key, kind, status, output, error, attempt, wake_at, coalesce(event, ''), match, event_id, started_at, completed_at
FROM steps WHERE tenant_id = ?1 AND run_id = ?2 AND seq >= ?3 ORDER BY seq LIMIT ?4
