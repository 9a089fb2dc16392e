-- Places a run just created by a statement of its own (a restart's, with the journal it keeps)
-- under its workflow's flow control, as create_flow_run.sql inserts one: claimable at $2, or
-- held (no available_at) when $3, with its run_flow row; wakes the hosts when it is not held.
-- $1 run, $2 available at, $3 held, $4 concurrency key or null, $5 flow, $6 priority, $7 rate
-- key or null, $8 rate slot, $9 debounce key or null, $10 wake channel.
WITH placed AS (
    UPDATE runs
    SET available_at = CASE WHEN $3 THEN NULL ELSE $2::timestamptz END, flow_key = $4
    WHERE id = $1
    RETURNING *
), flow AS (
    INSERT INTO run_flow (run_id, tenant_id, workflow, flow, priority, conc_key, held, flow_order, rate_key, rate_at, debounce_key)
    SELECT id, tenant_id, workflow, $5, $6, $4, $3, $2, $7, $8, $9 FROM placed
), woken AS (
    SELECT pg_notify($10, current_setting('application_name')) FROM placed WHERE NOT $3
)
SELECT id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from::text, '') AS continued_from, coalesce(continued_as::text, '') AS continued_as, attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from::text, '') AS restarted_from, paused_at
FROM placed, (SELECT count(*) FROM woken) AS n
