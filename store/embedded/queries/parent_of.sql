-- A run's link to its parent; no row when it is no child. ?1 tenant, ?2 run.
SELECT p.parent_run_id, p.parent_key, p.parent_close, p.awaited
FROM run_parents p JOIN runs r ON r.id = p.run_id
WHERE r.tenant_id = ?1 AND p.run_id = ?2
