-- Leases up to $1 runnable runs, shared fairly between the tenants that have any: each such
-- tenant offers its oldest ceil($1 / tenants) runs and the claim takes them round-robin (every
-- tenant's first, then every tenant's second, ...), so a tenant's backlog cannot delay another
-- tenant's new run. SKIP LOCKED lets many hosts claim at once without waiting on each other;
-- bumping lease_epoch fences out whoever held a run before. Rows offered but not taken are
-- locked only until this statement ends.
-- $1 limit, $2 owner, $3 lease ms.
WITH ready AS (
    SELECT t.id FROM tenants t
    WHERE EXISTS (
        SELECT 1 FROM runs r
        WHERE r.tenant_id = t.id AND r.status IN ('pending', 'running') AND r.available_at <= now()
          AND (r.lease_expires_at IS NULL OR r.lease_expires_at < now()))
), share AS (
    SELECT ceil($1::numeric / greatest(count(*), 1))::integer AS n FROM ready
), offered AS (
    SELECT c.id, c.available_at, row_number() OVER (PARTITION BY ready.id ORDER BY c.available_at) AS turn
    FROM ready CROSS JOIN share CROSS JOIN LATERAL (
        SELECT r.id, r.available_at FROM runs r
        WHERE r.tenant_id = ready.id AND r.status IN ('pending', 'running') AND r.available_at <= now()
          AND (r.lease_expires_at IS NULL OR r.lease_expires_at < now())
        ORDER BY r.available_at
        LIMIT share.n
        FOR UPDATE SKIP LOCKED
    ) c
), taken AS (
    SELECT id FROM offered ORDER BY turn, available_at LIMIT $1
)
UPDATE runs r
SET status = 'running',
    -- A leased run may next be claimed when its lease, as granted now, runs out. Keeping that
    -- in available_at moves held runs out of the range the next claims walk; renewals leave it
    -- alone, so they stay heap-only updates, and the lease check above skips the few runs
    -- whose renewed leases outlive it.
    available_at = now() + $3 * interval '1 millisecond',
    lease_owner = $2,
    lease_epoch = r.lease_epoch + 1,
    lease_expires_at = now() + $3 * interval '1 millisecond',
    started_at = coalesce(r.started_at, now()),
    activations = r.activations + 1,
    updated_at = now()
FROM taken
WHERE r.id = taken.id
RETURNING r.lease_epoch, r.id, r.tenant_id, r.workflow, r.version, r.digest, r.status, r.input, r.output, r.error,
    coalesce(r.idempotency_key, ''), r.retention_days, r.activations, r.available_at, r.created_at, r.started_at,
    r.completed_at, r.updated_at
