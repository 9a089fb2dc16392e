SELECT id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, '')
FROM runs WHERE tenant_id = ? AND id = ?
