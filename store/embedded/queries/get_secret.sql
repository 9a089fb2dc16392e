SELECT value FROM secrets WHERE tenant_id = ? AND name = ?
