-- ForkBranches: branch ?1's journal starts as run ?2's entries before seq ?3.
INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at)
SELECT ?1, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at
FROM steps WHERE run_id = ?2 AND seq < ?3 ORDER BY seq
