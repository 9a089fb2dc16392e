SELECT key_id, data_key, ciphertext, plaintext FROM secrets WHERE tenant_id = $1 AND name = $2
