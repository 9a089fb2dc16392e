-- Pauses the live runs of a paused workflow ($3 '') or version, as pause_run.sql pauses one,
-- and tells the hosts of the held ones. Run under pause_workflow_lock.sql, after the pause is
-- kept. Its second pass ($5 true, 021_pause.sql) leaves alone the runs already asked to pause,
-- which the first has counted and whose hosts it has told.
-- $1 tenant, $2 workflow, $3 version or '', $4 cancel channel, $5 second pass.
WITH paused AS (
    UPDATE runs
    SET paused_at = coalesce(paused_at, now()),
        status = CASE WHEN lease_owner IS NULL OR lease_expires_at <= now() THEN 'paused' ELSE status END,
        lease_owner = CASE WHEN lease_expires_at <= now() THEN NULL ELSE lease_owner END,
        lease_expires_at = CASE WHEN lease_expires_at <= now() THEN NULL ELSE lease_expires_at END,
        updated_at = now()
    WHERE tenant_id = $1 AND workflow = $2 AND ($3 = '' OR version = $3) AND status IN ('pending', 'running')
      AND (NOT $5::boolean OR paused_at IS NULL)
    RETURNING id, status
)
SELECT count(*), count(pg_notify($4, 'pause:' || id::text)) FILTER (WHERE status <> 'paused') FROM paused
