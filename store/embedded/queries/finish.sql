-- A run's end; fenced; returns the run's tenant and whether it is a child (015_children.sql).
-- Terminal runs (?6 set) get their completion time and sweep expiry.
-- ?1 run, ?2 epoch, ?3 status, ?4 output, ?5 error, ?6 completed at or null, ?7 now, ?8 us per day.
UPDATE runs
SET status = ?3, output = ?4, error = ?5, completed_at = ?6,
    expires_at = CASE WHEN ?6 IS NOT NULL THEN ?6 + retention_days * ?8 END,
    updated_at = ?7, available_at = NULL, lease_owner = NULL, lease_expires_at = NULL
WHERE id = ?1 AND lease_epoch = ?2 AND status = 'running'
RETURNING tenant_id, is_child
