-- A workflow's version ('' the latest bound). ?1 tenant, ?2 name, ?3 version.
SELECT name, version, digest, retention_days FROM workflows
WHERE tenant_id = ?1 AND name = ?2 AND (?3 = '' OR version = ?3)
ORDER BY bound_seq DESC LIMIT 1
