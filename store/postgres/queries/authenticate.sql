SELECT id, tenant_id, name FROM tokens WHERE hash = $1 AND revoked_at IS NULL
