-- No row: the tenant does not exist. ?1 tenant, ?2 name, ?3 key id, ?4 wrapped data key,
-- ?5 ciphertext, ?6 now.
INSERT INTO secrets (tenant_id, name, key_id, data_key, ciphertext, created_at, updated_at)
SELECT id, ?2, ?3, ?4, ?5, ?6, ?6 FROM tenants WHERE id = ?1
ON CONFLICT (tenant_id, name) DO UPDATE SET key_id = excluded.key_id, data_key = excluded.data_key,
    ciphertext = excluded.ciphertext, plaintext = NULL, updated_at = excluded.updated_at
RETURNING tenant_id, name, created_at, updated_at
