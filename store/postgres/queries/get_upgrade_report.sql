-- $1 tenant, $2 id.
SELECT created_at, report FROM upgrades WHERE tenant_id = $1 AND id = $2
