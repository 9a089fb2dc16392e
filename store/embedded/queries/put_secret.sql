-- No row: the tenant does not exist. ?1 tenant, ?2 name, ?3 value, ?4 now.
INSERT INTO secrets (tenant_id, name, value, created_at, updated_at)
SELECT id, ?2, ?3, ?4, ?4 FROM tenants WHERE id = ?1
ON CONFLICT (tenant_id, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
RETURNING tenant_id, name, created_at, updated_at
