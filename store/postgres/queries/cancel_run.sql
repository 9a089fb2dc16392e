-- Cancels a live run and tells every host, in one statement. No row: the run is unknown or
-- already terminal (the caller looks which). A concurrent finish that commits first makes the
-- status re-check fail, so a finished run is never turned into a cancelled one.
-- The run's snapshot goes with it. $1 tenant, $2 run, $3 error, $4 cancel channel.
WITH cancelled AS (
    UPDATE runs
    SET status = 'cancelled', error = $3, completed_at = now(), updated_at = now(),
        expires_at = now() + retention_days * interval '1 day',
        available_at = NULL, lease_owner = NULL, lease_expires_at = NULL
    WHERE tenant_id = $1 AND id = $2 AND status NOT IN ('completed', 'failed', 'cancelled', 'continued')
    RETURNING pg_notify($4, id::text) AS notified, id, tenant_id, workflow, version, digest, status, input, output, error,
        coalesce(idempotency_key, '') AS idempotency_key, retention_days, activations, available_at, created_at, started_at,
        completed_at, updated_at, deadline, coalesce(continued_from::text, '') AS continued_from, coalesce(continued_as::text, '') AS continued_as, attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from::text, '') AS restarted_from, paused_at
), unsnapped AS (
    DELETE FROM snapshots USING cancelled WHERE snapshots.run_id = cancelled.id
)
SELECT * FROM cancelled
