INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, nullif($11, ''), $12, $13, $14, $15)
ON CONFLICT (run_id, key) DO UPDATE
SET status = EXCLUDED.status, output = EXCLUDED.output, error = EXCLUDED.error,
    attempt = EXCLUDED.attempt, wake_at = EXCLUDED.wake_at, event_id = EXCLUDED.event_id,
    completed_at = EXCLUDED.completed_at
