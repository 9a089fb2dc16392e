-- An empty version means the most recently bound one. ?1 tenant, ?2 name, ?3 version.
SELECT tenant_id, name, version, digest, retention_days, retry, triggers, created_at
FROM workflows
WHERE tenant_id = ?1 AND name = ?2 AND (?3 = '' OR version = ?3)
ORDER BY bound_seq DESC
LIMIT 1
