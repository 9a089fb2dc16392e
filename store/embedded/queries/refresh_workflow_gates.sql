-- Sets the gate flags (021_run_gate.sql) of the tenant's workflow versions from what
-- workflow_pauses and hooks now hold. ?1 tenant, ?2 workflow ('' every one), ?3 version ('' every one).
UPDATE workflows
SET paused = EXISTS (SELECT 1 FROM workflow_pauses p
                     WHERE p.tenant_id = workflows.tenant_id AND p.workflow = workflows.name AND p.version IN ('', workflows.version)),
    hooked = EXISTS (SELECT 1 FROM hooks h
                     WHERE h.tenant_id = workflows.tenant_id AND h.workflow IN ('', workflows.name) AND h.version IN ('', workflows.version))
WHERE tenant_id = ?1 AND (?2 = '' OR name = ?2) AND (?3 = '' OR version = ?3)
