-- A run's run_flow row, with its run's continuation. ?1 run.
SELECT f.tenant_id, f.workflow, f.flow, f.priority, f.conc_key, f.held, f.rate_key, f.rate_at, f.debounce_key, coalesce(r.continued_as, '')
FROM run_flow f JOIN runs r ON r.id = f.run_id
WHERE f.run_id = ?1
