-- Binds (or rebinds) a workflow version to a module; rebinding makes it the latest version.
INSERT INTO workflows (tenant_id, name, version, digest, retention_days, retry, triggers)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (tenant_id, name, version) DO UPDATE
SET digest = EXCLUDED.digest,
    retention_days = EXCLUDED.retention_days,
    retry = EXCLUDED.retry,
    triggers = EXCLUDED.triggers,
    bound_seq = CASE WHEN workflows.digest = EXCLUDED.digest THEN workflows.bound_seq
                     ELSE nextval('workflow_bound_seq') END
RETURNING tenant_id, name, version, digest, retention_days, retry, triggers, created_at
