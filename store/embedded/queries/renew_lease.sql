-- The fence of a step commit (or of a wait resolved or timed out): renew the lease if it still
-- holds. No row: the lease is lost. Every use is journal progress, so the fault count starts
-- again. ?1 run, ?2 epoch, ?3 lease expiry, ?4 now.
UPDATE runs SET lease_expires_at = ?3, updated_at = ?4, faults = 0, last_fault = NULL
WHERE id = ?1 AND lease_epoch = ?2 AND status = 'running'
RETURNING tenant_id
