SELECT name, key_id, data_key, ciphertext, plaintext FROM secrets WHERE tenant_id = $1 AND key_id <> $2 ORDER BY name
