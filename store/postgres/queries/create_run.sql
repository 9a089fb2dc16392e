-- Inserts a pending run available now (paused, when its workflow or version is: 021_pause.sql)
-- and wakes the hosts in the same statement. With an idempotency key already used, nothing is
-- inserted (and nobody is woken).
WITH ins AS (
    INSERT INTO runs (tenant_id, workflow, version, digest, status, input, idempotency_key, retention_days, available_at, deadline, retry, attempt, paused_at)
    SELECT $1, $2, $3, $4, CASE WHEN paused THEN 'paused' ELSE 'pending' END, $5, nullif($6, ''), $7, now(), $9, $10,
        greatest($11::integer, 1), CASE WHEN paused THEN now() END
    FROM (SELECT EXISTS (SELECT 1 FROM workflow_pauses p WHERE p.tenant_id = $1 AND p.workflow = $2 AND p.version IN ('', $3)) AS paused) AS pause
    ON CONFLICT (tenant_id, workflow, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING *
), woken AS (
    SELECT pg_notify($8, current_setting('application_name')) FROM ins
)
SELECT id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from::text, '') AS continued_from, coalesce(continued_as::text, '') AS continued_as, attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from::text, '') AS restarted_from, paused_at
FROM ins, (SELECT count(*) FROM woken) AS n
