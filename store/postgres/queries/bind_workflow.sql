-- Binds a workflow version to a module. Rebinding it to another module (a hotfix) needs $8
-- (replace) and makes it the most recently bound version; without $8 no row comes back and the
-- caller reports the conflict. The guard is here, not only in lock_workflow, because two
-- deploys may race to bind a version that neither saw.
-- $1 tenant, $2 name, $3 version, $4 digest, $5 retention days, $6 retry, $7 triggers, $8 replace,
-- $9 flow or null.
INSERT INTO workflows (tenant_id, name, version, digest, retention_days, retry, triggers, flow)
VALUES ($1, $2, $3, $4, $5, $6, $7, $9)
ON CONFLICT (tenant_id, name, version) DO UPDATE
SET digest = EXCLUDED.digest,
    retention_days = EXCLUDED.retention_days,
    retry = EXCLUDED.retry,
    triggers = EXCLUDED.triggers,
    flow = EXCLUDED.flow,
    bound_seq = CASE WHEN workflows.digest = EXCLUDED.digest THEN workflows.bound_seq
                     ELSE nextval('workflow_bound_seq') END
WHERE workflows.digest = EXCLUDED.digest OR $8::boolean
RETURNING tenant_id, name, version, digest, retention_days, retry, triggers, created_at
