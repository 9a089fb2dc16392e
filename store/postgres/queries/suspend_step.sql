-- Suspend and journal the step that caused it, in one statement; journal progress, so the
-- run's fault count is cleared.
WITH fence AS (
    UPDATE runs
    SET lease_owner = NULL, lease_expires_at = NULL, available_at = CASE WHEN cancel_requested_at IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM steps c WHERE c.run_id = runs.id AND c.status = 'cancelled') THEN now() ELSE $3 END, updated_at = now(),
        faults = 0, last_fault = NULL
    WHERE id = $1 AND lease_epoch = $2 AND status = 'running'
    RETURNING id, tenant_id
), step AS (
    INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at)
    SELECT fence.id, fence.tenant_id, $4, $5, $6, $7, $8, $9, $10, $11, nullif($12, ''), $13, $14, $15, $16 FROM fence
    ON CONFLICT (run_id, key) DO UPDATE
    SET status = EXCLUDED.status, output = EXCLUDED.output, error = EXCLUDED.error,
        attempt = EXCLUDED.attempt, wake_at = EXCLUDED.wake_at, event_id = EXCLUDED.event_id,
        completed_at = EXCLUDED.completed_at
)
SELECT id FROM fence
