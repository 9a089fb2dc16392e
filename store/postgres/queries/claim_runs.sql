-- Leases up to $1 runnable runs, shared fairly between the tenants that have any and a free
-- slot under their concurrency cap: each such tenant offers its oldest
-- min(ceil($1 / tenants), free slots) runs and the claim takes them round-robin (every tenant's
-- first, then every tenant's second, ...; within a turn the tenant with the fewest runs in
-- flight first), so a tenant's backlog cannot delay another tenant's new run. A tenant's cap is its limits' "concurrency", else $4 (0: none); its held runs are
-- those with an unexpired lease, on any host. SKIP LOCKED lets many hosts claim at once
-- without waiting on each other; bumping lease_epoch fences out whoever held a run before.
-- Rows offered but not taken are locked only until this statement ends. Two hosts claiming at
-- the same moment can each see the same free slots, so a cap can be passed by at most one
-- claim batch per concurrent host; it holds from the next claim on.
-- $1 limit, $2 owner, $3 lease ms, $4 default tenant cap.
WITH ready AS (
    SELECT t.id, CASE WHEN cap.n > 0 THEN cap.n - held.n ELSE $1 END AS free, held.n AS held
    FROM tenants t
    CROSS JOIN LATERAL (SELECT coalesce((t.limits ->> 'concurrency')::integer, $4) AS n) cap
    CROSS JOIN LATERAL (
        SELECT count(*) AS n FROM runs h
        WHERE cap.n > 0 AND h.tenant_id = t.id AND h.lease_owner IS NOT NULL AND h.lease_expires_at > now()
    ) held
    -- A probe, not EXISTS: Postgres may turn an EXISTS into a join that reads every due
    -- entry of runs_ready for all tenants (a bitmap scan; with stale statistics it did), while
    -- an ordered LIMIT 1 per tenant stops at the tenant's first runnable run. It also walks
    -- the index in order, so the dead entries that updates of available_at leave behind until
    -- a vacuum are marked dead in the index by the first scan that meets them (a bitmap scan
    -- never marks them) and cost the next scans no visit to the table.
    CROSS JOIN LATERAL (
        SELECT 1 FROM runs r
        WHERE r.tenant_id = t.id AND r.status IN ('pending', 'running') AND r.available_at <= now()
          AND (r.lease_expires_at IS NULL OR r.lease_expires_at < now())
        ORDER BY r.available_at
        LIMIT 1
    ) due
), slots AS (
    SELECT id, free, held FROM ready WHERE free > 0
), share AS (
    SELECT ceil($1::numeric / greatest(count(*), 1))::integer AS n FROM slots
), offered AS (
    SELECT c.id, c.available_at, slots.held, row_number() OVER (PARTITION BY slots.id ORDER BY c.available_at) AS turn
    FROM slots CROSS JOIN share CROSS JOIN LATERAL (
        SELECT r.id, r.available_at FROM runs r
        WHERE r.tenant_id = slots.id AND r.status IN ('pending', 'running') AND r.available_at <= now()
          AND (r.lease_expires_at IS NULL OR r.lease_expires_at < now())
        ORDER BY r.available_at
        LIMIT least(share.n, slots.free)
        FOR UPDATE SKIP LOCKED
    ) c
), taken AS (
    -- Within a turn, the tenant with the fewest runs in flight first: under a backlog slots
    -- free one at a time, and a claim of one must go to a tenant with a run waiting and
    -- nothing running, not to the tenant whose backlog is older (the noisy neighbour).
    SELECT id FROM offered ORDER BY turn, held, available_at LIMIT $1
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
    updated_at = now(),
    -- A lease still owned has run out without a hand-back: its host died, hung or lost the
    -- store. That is a fault of the run's last activation (store.Claim.Faults).
    faults = r.faults + CASE WHEN r.lease_owner IS NOT NULL THEN 1 ELSE 0 END,
    last_fault = CASE WHEN r.lease_owner IS NOT NULL
        THEN 'the lease of ' || r.lease_owner || ' ran out before it handed the run back (its host died, hung or lost the store)'
        ELSE r.last_fault END
FROM taken
WHERE r.id = taken.id
RETURNING r.lease_epoch, r.faults, coalesce(r.last_fault, ''), r.id, r.tenant_id, r.workflow, r.version, r.digest, r.status, r.input, r.output, r.error,
    coalesce(r.idempotency_key, ''), r.retention_days, r.activations, r.available_at, r.created_at, r.started_at,
    r.completed_at, r.updated_at, r.deadline, coalesce(r.continued_from::text, '') AS continued_from, coalesce(r.continued_as::text, '') AS continued_as, r.attempt, r.retry, r.cancel_requested_at, r.cancel_grace_until, coalesce(r.restarted_from::text, '') AS restarted_from, r.paused_at
