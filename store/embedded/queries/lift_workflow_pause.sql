DELETE FROM workflow_pauses WHERE tenant_id = ?1 AND workflow = ?2 AND version = ?3
