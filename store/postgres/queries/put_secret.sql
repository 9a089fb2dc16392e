-- No row: the tenant does not exist. $1 tenant, $2 name, $3 value.
INSERT INTO secrets (tenant_id, name, value)
SELECT id, $2, $3 FROM tenants WHERE id = $1
ON CONFLICT (tenant_id, name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
RETURNING tenant_id, name, created_at, updated_at
