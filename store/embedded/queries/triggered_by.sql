-- The latest version of each of the tenant's workflows, where that version declares the event
-- as a trigger. ?1 tenant, ?2 event.
SELECT w.tenant_id, w.name, w.version, w.digest, w.retention_days, w.retry, w.triggers, w.created_at
FROM workflows w
WHERE w.tenant_id = ?1
  AND w.bound_seq = (SELECT max(l.bound_seq) FROM workflows l WHERE l.tenant_id = w.tenant_id AND l.name = w.name)
  AND EXISTS (SELECT 1 FROM json_each(w.triggers) t WHERE t.value = ?2)
ORDER BY w.name
