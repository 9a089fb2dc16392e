-- ?1 tenant, ?2 run ('' any), ?3 started run ('' any), ?4 status ('' any), ?5 limit.
SELECT id, tenant_id, run_id, hook_id, kind, target, payload, depth, status, attempts, attempt_log,
    coalesce(last_error, ''), coalesce(started_run_id, ''), next_at, created_at, updated_at
FROM hook_deliveries
WHERE tenant_id = ?1 AND (?2 = '' OR run_id = ?2) AND (?3 = '' OR started_run_id = ?3) AND (?4 = '' OR status = ?4)
ORDER BY created_at DESC, id
LIMIT ?5
