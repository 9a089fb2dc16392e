-- ?1 owner, ?2 lease until, ?3 limit, ?4 now.
UPDATE hook_deliveries
SET lease_owner = ?1, lease_expires_at = ?2, attempts = attempts + 1, updated_at = ?4
WHERE id IN (
    SELECT id FROM hook_deliveries
    WHERE status = 'pending' AND next_at <= ?4 AND (lease_expires_at IS NULL OR lease_expires_at < ?4)
    ORDER BY next_at LIMIT ?3
)
RETURNING id, tenant_id, run_id, hook_id, kind, target, payload, depth, status, attempts, attempt_log,
    coalesce(last_error, ''), coalesce(started_run_id, ''), next_at, created_at, updated_at
