-- Releases the lease and schedules the run; $3 null means only an event wakes it. A run
-- asked to cancel whose workflow has not seen it yet (no entry of its journal is cancelled) is
-- made claimable now instead: the request came while the run was leased, so it left
-- available_at alone, and the host may not have heard of it before the run suspended
-- (engine/cancel.go). suspend_step.sql and commit_and_suspend.sql do the same.
UPDATE runs
SET lease_owner = NULL, lease_expires_at = NULL, available_at = CASE WHEN cancel_requested_at IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM steps c WHERE c.run_id = runs.id AND c.status = 'cancelled') THEN now() ELSE $3 END, updated_at = now()
WHERE id = $1 AND lease_epoch = $2 AND status = 'running'
RETURNING id
