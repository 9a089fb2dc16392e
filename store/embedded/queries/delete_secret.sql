DELETE FROM secrets WHERE tenant_id = ? AND name = ?
