-- Who holds a run's lease and until when (store.Store.RunLease).
SELECT coalesce(lease_owner, ''), lease_expires_at FROM runs WHERE tenant_id = $1 AND id = $2
