SELECT id, limits, created_at FROM tenants ORDER BY created_at, id
