-- Who holds a run's lease and until when (store.Store.RunLease); an expired lease is reported
-- as it stands, the caller compares the time.
SELECT coalesce(lease_owner, ''), lease_expires_at FROM runs WHERE tenant_id = ? AND id = ?
