SELECT 1 FROM tenants WHERE id = ?
