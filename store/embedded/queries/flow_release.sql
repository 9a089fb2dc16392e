-- Gives a concurrency slot back; a key with none held is forgotten.
-- ?1 tenant, ?2 workflow, ?3 key.
UPDATE flow_keys SET active = active - 1
WHERE tenant_id = ?1 AND workflow = ?2 AND kind = 'concurrency' AND key = ?3
