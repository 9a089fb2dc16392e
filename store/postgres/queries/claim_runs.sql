-- Leases up to $1 runnable runs. SKIP LOCKED lets many hosts claim at once without waiting on
-- each other; bumping lease_epoch fences out whoever held a run before.
WITH claimable AS (
    SELECT id FROM runs
    WHERE status IN ('pending', 'running')
      AND available_at <= now()
      AND (lease_expires_at IS NULL OR lease_expires_at < now())
    ORDER BY available_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)
UPDATE runs r
SET status = 'running',
    lease_owner = $2,
    lease_epoch = r.lease_epoch + 1,
    lease_expires_at = now() + $3 * interval '1 millisecond',
    started_at = coalesce(r.started_at, now()),
    activations = r.activations + 1,
    updated_at = now()
FROM claimable c
WHERE r.id = c.id
RETURNING r.lease_epoch, r.id, r.tenant_id, r.workflow, r.version, r.digest, r.status, r.input, r.output, r.error,
    coalesce(r.idempotency_key, ''), r.retention_days, r.activations, r.available_at, r.created_at, r.started_at,
    r.completed_at, r.updated_at
