-- Inserts a pending run available now and wakes the hosts in the same statement. With an
-- idempotency key already used, nothing is inserted (and nobody is woken).
-- The gate (026_run_gate.sql): the run's workflows row, one primary-key probe, says whether it
-- is created paused (its workflow or version is) and hooked (a hook names it). A workflow
-- version with flow control inserts nothing here unless $12 (no row): its starts take the flow
-- path (flow.go, startRun), so a start without flow control pays only the read of a null
-- column. A run of no bound version passes an open gate.
-- $1 tenant, $2 workflow, $3 version, $4 digest, $5 input, $6 idempotency key, $7 retention
-- days, $8 wake channel, $9 deadline, $10 retry, $11 attempt, $12 insert under flow control too,
-- $13 trigger or null (store.Trigger).
WITH gate AS (
    SELECT coalesce(w.paused, false) AS paused, coalesce(w.hooked, false) AS hooked, w.flow
    FROM (SELECT 1) AS one LEFT JOIN workflows w ON w.tenant_id = $1 AND w.name = $2 AND w.version = $3
), ins AS (
    INSERT INTO runs (tenant_id, workflow, version, digest, status, input, idempotency_key, retention_days, available_at, deadline, retry, attempt, paused_at, hooked, trigger)
    SELECT $1, $2, $3, $4, CASE WHEN paused THEN 'paused' ELSE 'pending' END, $5, nullif($6, ''), $7, now(), $9, $10,
        greatest($11::integer, 1), CASE WHEN paused THEN now() END, hooked, $13::jsonb
    FROM gate
    WHERE gate.flow IS NULL OR $12::boolean
    ON CONFLICT (tenant_id, workflow, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING *
), woken AS (
    SELECT pg_notify($8, current_setting('application_name')) FROM ins
)
SELECT id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from::text, '') AS continued_from, coalesce(continued_as::text, '') AS continued_as, attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from::text, '') AS restarted_from, paused_at
FROM ins, (SELECT count(*) FROM woken) AS n
