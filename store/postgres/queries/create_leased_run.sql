-- Inserts a run leased to the host that starts it, as claim_runs.sql would lease it (epoch 1,
-- one activation, claimable again when the lease runs out), and wakes nobody: that host runs
-- it at once. When the tenant has a cap ($10 > 0) and its held runs plus the most this host
-- may lease at once ($11) would pass it, the run is inserted pending instead and the hosts are
-- woken, as create_run.sql does: however many of this host's starts race, they cannot pass
-- the cap. With an idempotency key already used, nothing is inserted.
-- $1 tenant, $2 workflow, $3 version, $4 digest, $5 input, $6 idempotency key, $7 retention
-- days, $8 owner, $9 lease ms, $10 tenant cap, $11 host reserve, $12 wake channel.
WITH room AS (
    SELECT $10::integer = 0 OR count(*) + $11::integer <= $10::integer AS leased
    FROM runs h
    WHERE $10::integer > 0 AND h.tenant_id = $1 AND h.lease_owner IS NOT NULL AND h.lease_expires_at > now()
), ins AS (
    INSERT INTO runs (tenant_id, workflow, version, digest, status, input, idempotency_key, retention_days,
                      available_at, lease_owner, lease_epoch, lease_expires_at, started_at, activations)
    SELECT $1, $2, $3, $4,
        CASE WHEN leased THEN 'running' ELSE 'pending' END, $5, nullif($6, ''), $7,
        CASE WHEN leased THEN now() + $9 * interval '1 millisecond' ELSE now() END,
        CASE WHEN leased THEN $8 END,
        CASE WHEN leased THEN 1 ELSE 0 END,
        CASE WHEN leased THEN now() + $9 * interval '1 millisecond' END,
        CASE WHEN leased THEN now() END,
        CASE WHEN leased THEN 1 ELSE 0 END
    FROM room
    ON CONFLICT (tenant_id, workflow, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING *
), woken AS (
    SELECT pg_notify($12, current_setting('application_name')) FROM ins WHERE ins.status = 'pending'
)
SELECT lease_epoch, id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''),
    retention_days, activations, available_at, created_at, started_at, completed_at, updated_at
FROM ins, (SELECT count(*) FROM woken) AS n
