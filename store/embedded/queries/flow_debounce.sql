-- A debounced start replaces the input of the key's pending run, not yet begun, and pushes its
-- start to ?5 (a run waiting for a concurrency slot keeps waiting). No row: it has begun.
-- ?1 tenant, ?2 run, ?3 input, ?4 now, ?5 new start.
UPDATE runs
SET input = ?3,
    available_at = CASE WHEN available_at IS NULL THEN NULL ELSE ?5 END,
    updated_at = ?4
WHERE tenant_id = ?1 AND id = ?2 AND status IN ('pending', 'paused') AND activations = 0 AND lease_owner IS NULL
  AND EXISTS (SELECT 1 FROM run_flow f WHERE f.run_id = runs.id)
RETURNING id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, ''), paused_at
