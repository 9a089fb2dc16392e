-- The run, if the lease still holds. ?1 run, ?2 epoch.
SELECT tenant_id, created_at FROM runs WHERE id = ?1 AND lease_epoch = ?2 AND status = 'running'
