-- Ends a start delivery: delivered with the run it started, or failed with why.
-- ?1 id, ?2 status, ?3 started run or null, ?4 error or null, ?5 now.
UPDATE hook_deliveries
SET status = ?2, started_run_id = ?3, last_error = ?4, next_at = NULL,
    lease_owner = NULL, lease_expires_at = NULL, updated_at = ?5
WHERE id = ?1
