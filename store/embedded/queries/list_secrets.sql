SELECT tenant_id, name, created_at, updated_at FROM secrets WHERE tenant_id = ? ORDER BY name
