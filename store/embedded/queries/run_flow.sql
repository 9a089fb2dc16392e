-- A run's flow state, as store/postgres's run_flow.sql. ?1 tenant, ?2 run.
SELECT f.flow, f.priority, f.conc_key, f.held, f.rate_key, f.rate_at, f.debounce_key, coalesce(k.active, 0)
FROM run_flow f
LEFT JOIN flow_keys k ON k.tenant_id = f.tenant_id AND k.workflow = f.workflow AND k.kind = 'concurrency' AND k.key = f.conc_key
WHERE f.tenant_id = ?1 AND f.run_id = ?2
