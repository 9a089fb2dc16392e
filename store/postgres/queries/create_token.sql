-- No row: the tenant does not exist. $1 id, $2 tenant, $3 name, $4 hash.
INSERT INTO tokens (id, tenant_id, name, hash)
SELECT $1, id, $3, $4 FROM tenants WHERE id = $2
RETURNING id, tenant_id, name, created_at, revoked_at
