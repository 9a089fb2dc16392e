SELECT secret FROM hook_secrets WHERE tenant_id = ?1
