-- Pauses a live run, in one statement: a run no host holds (pending, suspended, or its lease
-- run out) is paused at once, its lease cleared; a held one is asked (paused_at), and its host
-- told on the cancel channel ('pause:' and the id), to pause at its next durable call. The
-- first ask's time is kept. No row: the run is unknown or not live (the caller looks which).
-- $1 tenant, $2 run, $3 cancel channel.
WITH paused AS (
    UPDATE runs
    SET paused_at = coalesce(paused_at, now()),
        status = CASE WHEN lease_owner IS NULL OR lease_expires_at <= now() THEN 'paused' ELSE status END,
        lease_owner = CASE WHEN lease_expires_at <= now() THEN NULL ELSE lease_owner END,
        lease_expires_at = CASE WHEN lease_expires_at <= now() THEN NULL ELSE lease_expires_at END,
        updated_at = now()
    WHERE tenant_id = $1 AND id = $2 AND status IN ('pending', 'running')
    RETURNING pg_notify($3, 'pause:' || id::text) AS notified, id, tenant_id, workflow, version, digest, status, input, output, error,
        coalesce(idempotency_key, '') AS idempotency_key, retention_days, activations, available_at, created_at, started_at,
        completed_at, updated_at, deadline, coalesce(continued_from::text, '') AS continued_from,
        coalesce(continued_as::text, '') AS continued_as, attempt, retry, cancel_requested_at, cancel_grace_until,
        coalesce(restarted_from::text, '') AS restarted_from, paused_at
)
SELECT * FROM paused
