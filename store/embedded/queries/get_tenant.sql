SELECT id, limits, created_at FROM tenants WHERE id = ?
