-- Ends a start delivery locked by hook_start_lock.sql: delivered with the run it started, or
-- failed with why. $1 id, $2 status, $3 started run or null, $4 error or null.
UPDATE hook_deliveries
SET status = $2, started_run_id = $3, last_error = $4, next_at = NULL,
    lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
WHERE id = $1
