SELECT id, tenant_id, name FROM tokens WHERE hash = ? AND revoked_at IS NULL
