-- Holds a run that is to pause, at a durable call of its activation: writes the held step
-- (when $4 is not null), makes the run paused, available now, and releases the lease, in one
-- statement, if the pause still stands ($3: or always, a step's attempts ran out under
-- onExhausted "pause"). Journal progress clears the fault count, as suspend_step.sql does.
-- No row: the lease is lost, or the pause was withdrawn (the caller looks which).
-- $1 run, $2 epoch, $3 always, $4.. the step (stepArgs), all null for none.
WITH fence AS (
    UPDATE runs
    SET status = 'paused', paused_at = coalesce(paused_at, now()), lease_owner = NULL, lease_expires_at = NULL,
        available_at = now(), updated_at = now(),
        faults = CASE WHEN $4::integer IS NULL THEN faults ELSE 0 END,
        last_fault = CASE WHEN $4::integer IS NULL THEN last_fault END
    WHERE id = $1 AND lease_epoch = $2 AND status = 'running' AND (paused_at IS NOT NULL OR $3)
    RETURNING id, tenant_id
), step AS (
    INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at)
    SELECT fence.id, fence.tenant_id, $4, $5, $6, $7, $8, $9, $10, $11, nullif($12, ''), $13, $14, $15, $16 FROM fence
    WHERE $4::integer IS NOT NULL
    ON CONFLICT (run_id, key) DO UPDATE
    SET status = EXCLUDED.status, output = EXCLUDED.output, error = EXCLUDED.error,
        attempt = EXCLUDED.attempt, wake_at = EXCLUDED.wake_at, event_id = EXCLUDED.event_id,
        completed_at = EXCLUDED.completed_at
)
SELECT id FROM fence
