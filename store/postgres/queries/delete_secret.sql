DELETE FROM secrets WHERE tenant_id = $1 AND name = $2
