-- A run's end; fenced. Its snapshot goes with it: a finished run never resumes from one. The
-- lines its guest logged in the activation that ends it are kept in the same statement, as
-- append_guest_log.sql keeps them, and only if the fence holds.
-- $1 run, $2 epoch, $3 status, $4 output, $5 error, $6 the lines (NULL: none), $7 and $8 the
-- guest log's bounds.
WITH fence AS (
    UPDATE runs
    SET status = $3, output = $4, error = $5,
        completed_at = CASE WHEN $3 IN ('completed', 'failed', 'cancelled', 'continued') THEN now() END,
        expires_at = CASE WHEN $3 IN ('completed', 'failed', 'cancelled', 'continued') THEN now() + retention_days * interval '1 day' END,
        updated_at = now(), available_at = NULL, lease_owner = NULL, lease_expires_at = NULL
    WHERE id = $1 AND lease_epoch = $2 AND status = 'running'
    RETURNING id, tenant_id
), unsnapped AS (
    DELETE FROM snapshots USING fence WHERE snapshots.run_id = fence.id
), logged AS (
    INSERT INTO run_log (run_id, tenant_id, at, kind, detail)
    SELECT fence.id, fence.tenant_id, g.line_at, 'guest', g.line_detail
    FROM fence, guest_log_rows(fence.id, $6::jsonb, $7, $8) AS g
    ORDER BY g.line_ord
)
SELECT id FROM fence
