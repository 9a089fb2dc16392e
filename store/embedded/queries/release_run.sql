-- Hands a run's lease back, the run available now (ReleaseOwned). ?1 run, ?2 now.
UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL, available_at = ?2, updated_at = ?2
WHERE id = ?1
