-- ?1 tenant, ?2 workflow, ?3 key.
SELECT active, lim FROM flow_keys WHERE tenant_id = ?1 AND workflow = ?2 AND kind = 'concurrency' AND key = ?3
