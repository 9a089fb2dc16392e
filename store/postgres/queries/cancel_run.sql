UPDATE runs
SET status = 'cancelled', error = $3, completed_at = now(), updated_at = now(),
    available_at = NULL, lease_owner = NULL, lease_expires_at = NULL
WHERE tenant_id = $1 AND id = $2
RETURNING id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at
