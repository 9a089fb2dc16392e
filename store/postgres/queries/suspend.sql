-- Releases the lease and schedules the run; $3 null means only an event wakes it.
UPDATE runs
SET lease_owner = NULL, lease_expires_at = NULL, available_at = $3, updated_at = now()
WHERE id = $1 AND lease_epoch = $2 AND status = 'running'
RETURNING id
