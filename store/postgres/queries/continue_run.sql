-- Creates the run that continues an ended one (FinishAndContinue), pending and claimable at $8
-- (null: now), past the gate create_run.sql reads (026_run_gate.sql: paused when its workflow
-- or version is, hooked when a hook names it; its flow slot it takes from the ended run, in
-- 024's flow_released); links the two both ways; moves to it the events signalled to the ended run that
-- no wait took; and wakes the hosts. $1 ended run, $2 tenant, $3 workflow, $4 version,
-- $5 digest, $6 input, $7 idempotency key or '', $8 not before, $9 retention days,
-- $10 deadline, $11 retry policy, $12 attempt, $13 wake channel.
WITH ins AS (
    INSERT INTO runs (tenant_id, workflow, version, digest, status, input, idempotency_key, retention_days,
                      available_at, deadline, retry, attempt, continued_from, paused_at, hooked)
    SELECT $2, $3, $4, $5, CASE WHEN paused THEN 'paused' ELSE 'pending' END, $6, nullif($7, ''), $9,
        coalesce($8::timestamptz, now()), $10, $11, greatest($12::integer, 1), $1, CASE WHEN paused THEN now() END, hooked
    FROM (SELECT coalesce(w.paused, false) AS paused, coalesce(w.hooked, false) AS hooked
          FROM (SELECT 1) AS one LEFT JOIN workflows w ON w.tenant_id = $2 AND w.name = $3 AND w.version = $4) AS gate
    RETURNING *
), linked AS (
    UPDATE runs SET continued_as = ins.id FROM ins WHERE runs.id = $1
), moved AS (
    UPDATE events SET run_id = ins.id FROM ins WHERE events.run_id = $1
), woken AS (
    SELECT pg_notify($13, current_setting('application_name')) FROM ins
)
SELECT id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from::text, '') AS continued_from, coalesce(continued_as::text, '') AS continued_as, attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from::text, '') AS restarted_from, paused_at
FROM ins, (SELECT count(*) FROM woken) AS n
