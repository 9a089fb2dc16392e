-- Inserts a run leased to the host that starts it, as claim_runs.sql would lease it (epoch 1,
-- one activation, claimable again when the lease runs out), and wakes nobody: that host runs
-- it at once; with no owner ($9 '') it is inserted pending, as below. The workflow is resolved here, as resolve_workflow.sql does, so a start is one
-- statement; the run's retention is the requested one, else the workflow's, else the default,
-- never more than the ceiling (0: none). When the tenant has a cap ($10 > 0) and its held
-- runs plus the most this host may lease at once ($11) would pass it, the run is inserted
-- pending instead and the hosts are woken, as create_run.sql does: however many of this
-- host's starts race, they cannot pass the cap. No row: the workflow is unknown, or the
-- idempotency key is already used.
-- $1 tenant, $2 workflow, $3 version ('' for the latest), $4 input, $5 idempotency key,
-- $6 requested retention days, $7 default retention days, $8 retention ceiling, $9 owner,
-- $10 tenant cap, $11 host reserve, $12 lease ms, $13 wake channel, $14 deadline or null, $15 retry policy or null, $16 attempt,
-- $17 priority in seconds (a pending run is available that much earlier), $18 trigger or null.
-- The gate (026_run_gate.sql) is the workflow row this statement resolves: a run of a paused
-- workflow or version is inserted paused, not leased, and wakes nobody (021_pause.sql says why
-- reading the pause here cannot miss it); a run a hook names is inserted hooked.
-- A workflow with flow control inserts nothing here (no row): its starts take CreateLeasedRun's
-- flow path (flow.go), so a start without flow control pays only the read of a null column.
WITH wf AS (
    SELECT name, version, digest, retention_days, flow, paused, hooked
    FROM workflows w
    WHERE tenant_id = $1 AND name = $2 AND ($3 = '' OR version = $3)
    ORDER BY bound_seq DESC
    LIMIT 1
), room AS (
    SELECT $9 <> '' AND ($10::integer = 0 OR count(*) + $11::integer <= $10::integer) AS free
    FROM runs h
    WHERE $9 <> '' AND $10::integer > 0 AND h.tenant_id = $1 AND h.lease_owner IS NOT NULL AND h.lease_expires_at > now()
), lease AS (
    SELECT wf.*, free AND NOT wf.paused AS leased FROM wf, room
), ins AS (
    INSERT INTO runs (tenant_id, workflow, version, digest, status, input, idempotency_key, retention_days,
                      available_at, lease_owner, lease_epoch, lease_expires_at, started_at, activations, deadline, retry, attempt,
                      paused_at, created_by, hooked, trigger)
    SELECT $1, wf.name, wf.version, wf.digest,
        CASE WHEN leased THEN 'running' WHEN paused THEN 'paused' ELSE 'pending' END, $4, nullif($5, ''),
        least(coalesce(nullif($6::integer, 0), nullif(wf.retention_days, 0), $7::integer),
              CASE WHEN $8::integer > 0 THEN $8::integer ELSE 2147483647 END),
        CASE WHEN leased THEN now() + $12 * interval '1 millisecond' ELSE now() - $17 * interval '1 second' END,
        CASE WHEN leased THEN $9 END,
        CASE WHEN leased THEN 1 ELSE 0 END,
        CASE WHEN leased THEN now() + $12 * interval '1 millisecond' END,
        CASE WHEN leased THEN now() END,
        CASE WHEN leased THEN 1 ELSE 0 END,
        $14::timestamptz, $15::jsonb, greatest($16::integer, 1), CASE WHEN paused THEN now() END,
        CASE WHEN leased THEN $9 END, wf.hooked, $18::jsonb
    FROM lease AS wf
    WHERE wf.flow IS NULL
    ON CONFLICT (tenant_id, workflow, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING *
), woken AS (
    SELECT pg_notify($13, current_setting('application_name')) FROM ins WHERE ins.status = 'pending'
)
SELECT lease_epoch, id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''),
    retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from::text, '') AS continued_from, coalesce(continued_as::text, '') AS continued_as, attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from::text, '') AS restarted_from, paused_at
FROM ins, (SELECT count(*) FROM woken) AS n
