SELECT tenant_id, workflow, version, paused_at FROM workflow_pauses WHERE tenant_id = $1 ORDER BY workflow, version
