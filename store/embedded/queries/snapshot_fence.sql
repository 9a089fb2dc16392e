-- The fence of a snapshot saved without a step: renew the lease if it still holds, as
-- renew_lease.sql does, but leave the fault count alone (a snapshot is no journal progress).
-- No row: the lease is lost. ?1 run, ?2 epoch, ?3 lease expiry, ?4 now.
UPDATE runs SET lease_expires_at = ?3, updated_at = ?4
WHERE id = ?1 AND lease_epoch = ?2 AND status = 'running'
RETURNING tenant_id
