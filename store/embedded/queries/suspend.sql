-- Releases the lease and schedules the run (?3 null: only an event wakes it); fenced.
-- ?1 run, ?2 epoch, ?3 available at, ?4 now.
UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL, available_at = ?3, updated_at = ?4
WHERE id = ?1 AND lease_epoch = ?2 AND status = 'running'
RETURNING tenant_id
