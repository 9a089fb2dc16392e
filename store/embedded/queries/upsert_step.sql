-- Inserts a journal row, or updates it in place keeping its seq, kind, event, match and
-- first start. ?1 run, ?2 tenant, ?3.. the step (stepArgs).
INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
ON CONFLICT (run_id, key) DO UPDATE
SET status = excluded.status, output = excluded.output, error = excluded.error,
    attempt = excluded.attempt, wake_at = excluded.wake_at, event_id = excluded.event_id,
    completed_at = excluded.completed_at
