-- ?1 id, ?2 tenant, ?3 run, ?4 hook, ?5 kind, ?6 target, ?7 payload, ?8 depth, ?9 status,
-- ?10 attempts, ?11 last error, ?12 started run, ?13 next at, ?14 now.
INSERT INTO hook_deliveries (id, tenant_id, run_id, hook_id, kind, target, payload, depth, status, attempts,
    last_error, started_run_id, next_at, created_at, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14)
ON CONFLICT (run_id, hook_id) DO NOTHING
