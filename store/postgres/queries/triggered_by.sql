-- The latest version of each of the tenant's workflows, where that version declares the event
-- as a trigger. $1 tenant, $2 event.
SELECT tenant_id, name, version, digest, retention_days, retry, triggers, created_at
FROM (
    SELECT DISTINCT ON (name) * FROM workflows WHERE tenant_id = $1 ORDER BY name, bound_seq DESC
) latest
WHERE $2 = ANY (triggers)
ORDER BY name
