-- A debounced start: the key's pending run, if it has not begun (never claimed, not leased),
-- takes the new input and starts $4 ms from now (a run waiting for a concurrency slot keeps
-- waiting). No row: the run has begun or ended, and the start creates a new one.
-- $1 tenant, $2 run, $3 input, $4 period ms.
UPDATE runs r
SET input = $3,
    available_at = CASE WHEN r.available_at IS NULL THEN NULL ELSE now() + $4 * interval '1 millisecond' END,
    updated_at = now()
FROM run_flow f
WHERE r.tenant_id = $1 AND r.id = $2 AND f.run_id = r.id
  AND r.status IN ('pending', 'paused') AND r.activations = 0 AND r.lease_owner IS NULL
RETURNING r.id, r.tenant_id, r.workflow, r.version, r.digest, r.status, r.input, r.output, r.error,
    coalesce(r.idempotency_key, ''), r.retention_days, r.activations, r.available_at, r.created_at, r.started_at,
    r.completed_at, r.updated_at, r.deadline, coalesce(r.continued_from::text, '') AS continued_from,
    coalesce(r.continued_as::text, '') AS continued_as, r.attempt, r.retry, r.cancel_requested_at, r.cancel_grace_until,
    coalesce(r.restarted_from::text, '') AS restarted_from, r.paused_at
