-- Leases due webhook deliveries to one dispatcher and counts the attempt each is claimed for.
-- SKIP LOCKED and the lease together keep two dispatchers off one delivery: a row another
-- claim is taking is skipped, and one leased to a live owner is not due.
-- $1 owner, $2 lease ms, $3 limit.
WITH due AS (
    SELECT id FROM hook_deliveries
    WHERE status = 'pending' AND next_at <= now() AND (lease_expires_at IS NULL OR lease_expires_at < now())
    ORDER BY next_at
    LIMIT $3
    FOR UPDATE SKIP LOCKED
)
UPDATE hook_deliveries d
SET lease_owner = $1, lease_expires_at = now() + $2 * interval '1 millisecond', attempts = attempts + 1, updated_at = now()
FROM due WHERE d.id = due.id
RETURNING d.id, d.tenant_id, d.run_id, d.hook_id, d.kind, d.target, d.payload, d.depth, d.status, d.attempts,
    d.attempt_log, coalesce(d.last_error, ''), coalesce(d.started_run_id::text, ''), d.next_at, d.created_at, d.updated_at
