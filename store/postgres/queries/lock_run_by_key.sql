-- Locks and reads the run an idempotency key names, for SignalWithStart: its status cannot
-- change until the transaction ends. $1 tenant, $2 workflow, $3 key.
SELECT id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from::text, '') AS continued_from, coalesce(continued_as::text, '') AS continued_as, attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from::text, '') AS restarted_from, paused_at
FROM runs WHERE tenant_id = $1 AND workflow = $2 AND idempotency_key = $3
FOR UPDATE
