-- Asks a pending or running run to cancel itself, as store/postgres's request_cancel.sql.
-- ?1 tenant, ?2 run, ?3 grace until, ?4 now.
UPDATE runs
SET cancel_requested_at = coalesce(cancel_requested_at, ?4),
    cancel_grace_until = coalesce(cancel_grace_until, ?3),
    available_at = CASE WHEN lease_owner IS NULL OR lease_expires_at <= ?4 THEN ?4 ELSE available_at END,
    updated_at = ?4
WHERE tenant_id = ?1 AND id = ?2 AND status IN ('pending', 'running')
RETURNING id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, ''), paused_at
