-- A run's children, oldest first. $1 tenant, $2 parent run.
SELECT r.id::text, r.workflow, r.status, p.parent_run_id::text, p.parent_key, p.parent_close, p.awaited
FROM run_parents p JOIN runs r ON r.id = p.run_id
WHERE r.tenant_id = $1 AND p.parent_run_id = $2
ORDER BY p.created_at, r.id
