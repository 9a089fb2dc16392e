-- The ended run as its hooks see it; hooked 0 ends the look. ?1 run.
SELECT hooked, tenant_id, workflow, version, status, output, error, completed_at, retention_days, coalesce(continued_as, '')
FROM runs WHERE id = ?1
