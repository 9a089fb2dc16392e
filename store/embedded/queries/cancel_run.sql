-- Cancels a live run. No row: the run is unknown or already terminal (the caller looks which).
-- ?1 tenant, ?2 run, ?3 error, ?4 now, ?5 microseconds per day.
UPDATE runs
SET status = 'cancelled', error = ?3, completed_at = ?4, updated_at = ?4,
    expires_at = ?4 + retention_days * ?5,
    available_at = NULL, lease_owner = NULL, lease_expires_at = NULL
WHERE tenant_id = ?1 AND id = ?2 AND status NOT IN ('completed', 'failed', 'cancelled', 'continued')
RETURNING id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, ''), paused_at
