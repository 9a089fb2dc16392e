-- The next run waiting for a slot of a concurrency key: the lowest flow_order (priority, then
-- age). ?1 tenant, ?2 workflow, ?3 key.
SELECT f.run_id, f.flow_order FROM run_flow f JOIN runs r ON r.id = f.run_id
WHERE f.tenant_id = ?1 AND f.workflow = ?2 AND f.conc_key = ?3 AND f.held = 1 AND r.status IN ('pending', 'paused')
ORDER BY f.flow_order, f.run_id
LIMIT 1
