-- No row: the tenant does not exist. $1 tenant, $2 name, $3 key id, $4 wrapped data key, $5 ciphertext.
INSERT INTO secrets (tenant_id, name, key_id, data_key, ciphertext)
SELECT id, $2, $3, $4, $5 FROM tenants WHERE id = $1
ON CONFLICT (tenant_id, name) DO UPDATE SET key_id = EXCLUDED.key_id, data_key = EXCLUDED.data_key,
    ciphertext = EXCLUDED.ciphertext, plaintext = NULL, updated_at = now()
RETURNING tenant_id, name, created_at, updated_at
