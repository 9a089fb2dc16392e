-- The run's last step and its end, in one statement: a run whose final step is followed only
-- by its result (the usual end) commits once instead of twice. Its snapshot goes with it, as
-- in finish.sql, and so do the lines its guest logged.
-- $1 run, $2 epoch, $3 status, $4 output, $5 error, $6 the lines (NULL: none), $7 and $8 the
-- guest log's bounds, $9.. the step (stepArgs).
WITH fence AS (
    UPDATE runs
    SET status = $3, output = $4, error = $5,
        completed_at = CASE WHEN $3 IN ('completed', 'failed', 'cancelled', 'continued') THEN now() END,
        expires_at = CASE WHEN $3 IN ('completed', 'failed', 'cancelled', 'continued') THEN now() + retention_days * interval '1 day' END,
        updated_at = now(), available_at = NULL, lease_owner = NULL, lease_expires_at = NULL
    WHERE id = $1 AND lease_epoch = $2 AND status = 'running'
    RETURNING id, tenant_id
), step AS (
    INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at)
    SELECT fence.id, fence.tenant_id, $9, $10, $11, $12, $13, $14, $15, $16, nullif($17, ''), $18, $19, $20, $21 FROM fence
    ON CONFLICT (run_id, key) DO UPDATE
    SET status = EXCLUDED.status, output = EXCLUDED.output, error = EXCLUDED.error,
        attempt = EXCLUDED.attempt, wake_at = EXCLUDED.wake_at, event_id = EXCLUDED.event_id,
        completed_at = EXCLUDED.completed_at
), unsnapped AS (
    DELETE FROM snapshots USING fence WHERE snapshots.run_id = fence.id
), logged AS (
    INSERT INTO run_log (run_id, tenant_id, at, kind, detail)
    SELECT fence.id, fence.tenant_id, g.line_at, 'guest', g.line_detail
    FROM fence, guest_log_rows(fence.id, $6::jsonb, $7, $8) AS g
    ORDER BY g.line_ord
)
SELECT id FROM fence
