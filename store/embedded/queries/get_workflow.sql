SELECT tenant_id, name, version, digest, retention_days, retry, triggers, created_at
FROM workflows WHERE tenant_id = ? AND name = ? AND version = ?
