-- Inserts a pending run under flow control with its run_flow row, available at $9, or held
-- (no available_at) when $10, and wakes the hosts when it is not held. It passes the gate
-- create_run.sql reads (026_run_gate.sql): a run of a paused workflow or version is inserted
-- paused (021_pause.sql says why reading the pause here cannot miss it), a held one keeping no
-- available_at either way, and hooked when a hook names it. No row: the idempotency key is
-- already used.
-- $1 tenant, $2 workflow, $3 version, $4 digest, $5 input, $6 idempotency key, $7 retention
-- days, $8 wake channel, $9 available at, $10 held, $11 deadline, $12 retry, $13 attempt,
-- $14 concurrency key or null, $15 flow, $16 priority, $17 rate key or null, $18 rate slot,
-- $19 debounce key or null, $20 trigger or null.
WITH ins AS (
    INSERT INTO runs (tenant_id, workflow, version, digest, status, input, idempotency_key, retention_days, available_at, deadline, retry, attempt, flow_key, paused_at, hooked, trigger)
    SELECT $1, $2, $3, $4, CASE WHEN paused THEN 'paused' ELSE 'pending' END, $5, nullif($6, ''), $7, CASE WHEN $10 THEN NULL ELSE $9::timestamptz END,
            $11, $12, greatest($13::integer, 1), $14, CASE WHEN paused THEN now() END, hooked, $20::jsonb
    FROM (SELECT coalesce(w.paused, false) AS paused, coalesce(w.hooked, false) AS hooked
          FROM (SELECT 1) AS one LEFT JOIN workflows w ON w.tenant_id = $1 AND w.name = $2 AND w.version = $3) AS gate
    ON CONFLICT (tenant_id, workflow, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING *
), flow AS (
    INSERT INTO run_flow (run_id, tenant_id, workflow, flow, priority, conc_key, held, flow_order, rate_key, rate_at, debounce_key)
    SELECT id, $1, $2, $15, $16, $14, $10, $9, $17, $18, $19 FROM ins
), woken AS (
    SELECT pg_notify($8, current_setting('application_name')) FROM ins WHERE NOT $10
)
SELECT id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from::text, '') AS continued_from, coalesce(continued_as::text, '') AS continued_as, attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from::text, '') AS restarted_from, paused_at
FROM ins, (SELECT count(*) FROM woken) AS n
