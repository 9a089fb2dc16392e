UPDATE runs
SET lease_owner = NULL, lease_expires_at = NULL, available_at = now(), updated_at = now()
WHERE id = $1 AND lease_epoch = $2 AND status = 'running'
RETURNING id
