-- ?1 run, ?2 tenant, ?3 workflow, ?4 flow, ?5 priority, ?6 concurrency key, ?7 held,
-- ?8 flow order, ?9 rate key, ?10 rate slot, ?11 debounce key.
INSERT INTO run_flow (run_id, tenant_id, workflow, flow, priority, conc_key, held, flow_order, rate_key, rate_at, debounce_key)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
ON CONFLICT (run_id) DO NOTHING
