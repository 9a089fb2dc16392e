SELECT name, key_id, data_key, ciphertext, plaintext FROM secrets WHERE tenant_id = ? AND key_id <> ? ORDER BY name
