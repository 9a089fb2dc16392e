SELECT status FROM runs WHERE tenant_id = $1 AND id = $2
