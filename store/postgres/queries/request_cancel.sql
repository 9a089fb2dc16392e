-- Asks a pending or running run to cancel itself and tells every host, in one statement: the
-- first request's time and grace are kept; a run no host holds (suspended, or pending) is made
-- claimable now, so its workflow sees the cancel at once. No row: the run is unknown or not
-- live (the caller looks which). $1 tenant, $2 run, $3 grace until, $4 cancel channel,
-- $5 wake channel.
WITH asked AS (
    UPDATE runs
    SET cancel_requested_at = coalesce(cancel_requested_at, now()),
        cancel_grace_until = coalesce(cancel_grace_until, $3),
        available_at = CASE WHEN lease_owner IS NULL OR lease_expires_at <= now() THEN now() ELSE available_at END,
        updated_at = now()
    WHERE tenant_id = $1 AND id = $2 AND status IN ('pending', 'running')
    RETURNING pg_notify($4, 'requested:' || id::text) AS notified, pg_notify($5, current_setting('application_name')) AS woken,
        id, tenant_id, workflow, version, digest, status, input, output, error,
        coalesce(idempotency_key, '') AS idempotency_key, retention_days, activations, available_at, created_at, started_at,
        completed_at, updated_at, deadline, coalesce(continued_from::text, '') AS continued_from,
        coalesce(continued_as::text, '') AS continued_as, attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from::text, '') AS restarted_from, paused_at
)
SELECT * FROM asked
