-- The tenant's held runs: those with an unexpired lease, on any host. ?1 tenant, ?2 now.
SELECT count(*) FROM runs WHERE tenant_id = ?1 AND lease_owner IS NOT NULL AND lease_expires_at > ?2
