-- Releases the lease and schedules the run (?3 null: only an event wakes it); fenced. A run
-- asked to cancel whose workflow has not seen it yet is made claimable now instead, as
-- store/postgres's suspend.sql says why.
-- ?1 run, ?2 epoch, ?3 available at, ?4 now.
UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL, available_at = CASE WHEN cancel_requested_at IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM steps c WHERE c.run_id = runs.id AND c.status = 'cancelled') THEN ?4 ELSE ?3 END, updated_at = ?4
WHERE id = ?1 AND lease_epoch = ?2 AND status = 'running'
RETURNING tenant_id
