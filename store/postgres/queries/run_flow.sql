-- A run's flow state: its run_flow row, and its concurrency key's slots held now.
-- $1 tenant, $2 run.
SELECT f.flow, f.priority, f.conc_key, f.held, f.rate_key, f.rate_at, f.debounce_key, coalesce(k.active, 0)
FROM run_flow f
LEFT JOIN flow_keys k ON k.tenant_id = f.tenant_id AND k.workflow = f.workflow AND k.kind = 'concurrency' AND k.key = f.conc_key
WHERE f.tenant_id = $1 AND f.run_id = $2
