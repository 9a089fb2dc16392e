SELECT id, tenant_id, name, created_at, revoked_at FROM tokens WHERE tenant_id = ? ORDER BY created_at, id
