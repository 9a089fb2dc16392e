SELECT status FROM runs WHERE tenant_id = ? AND id = ?
