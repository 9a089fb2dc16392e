-- ?1 tenant, ?2 name; ?3-?6 the value the caller read (key id, data key, ciphertext,
-- plaintext); ?7-?9 the new sealed one. No row: the secret changed since it was read.
UPDATE secrets SET key_id = ?7, data_key = ?8, ciphertext = ?9, plaintext = NULL
WHERE tenant_id = ?1 AND name = ?2 AND key_id = ?3 AND data_key IS ?4 AND ciphertext IS ?5 AND plaintext IS ?6
