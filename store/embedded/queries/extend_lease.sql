UPDATE runs SET lease_expires_at = ?3
WHERE id = ?1 AND lease_epoch = ?2 AND status = 'running'
