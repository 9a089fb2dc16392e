-- A run's end; fenced. Its snapshot goes with it: a finished run never resumes from one.
WITH fence AS (
    UPDATE runs
    SET status = $3, output = $4, error = $5,
        completed_at = CASE WHEN $3 IN ('completed', 'failed', 'cancelled', 'continued') THEN now() END,
        expires_at = CASE WHEN $3 IN ('completed', 'failed', 'cancelled', 'continued') THEN now() + retention_days * interval '1 day' END,
        updated_at = now(), available_at = NULL, lease_owner = NULL, lease_expires_at = NULL
    WHERE id = $1 AND lease_epoch = $2 AND status = 'running'
    RETURNING id
), unsnapped AS (
    DELETE FROM snapshots USING fence WHERE snapshots.run_id = fence.id
)
SELECT id FROM fence
