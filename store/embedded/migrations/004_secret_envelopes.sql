-- Secret values are stored encrypted: the engine seals each one under a data key of its own
-- (AES-256-GCM) wrapped by the operator's key key_id (envelope encryption), so this table holds
-- ciphertext only. A row from before has key_id '' and its value in plaintext, until the
-- engine, started with a key, seals it and clears plaintext. SQLite cannot drop a NOT NULL, so
-- the table is made anew.
CREATE TABLE secrets_sealed (
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    name       TEXT NOT NULL,
    key_id     TEXT NOT NULL DEFAULT '',
    data_key   BLOB,
    ciphertext BLOB,
    plaintext  BLOB,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, name),
    CHECK ((key_id <> '' AND data_key IS NOT NULL AND ciphertext IS NOT NULL AND plaintext IS NULL)
        OR (key_id = '' AND data_key IS NULL AND ciphertext IS NULL AND plaintext IS NOT NULL))
);
INSERT INTO secrets_sealed (tenant_id, name, plaintext, created_at, updated_at)
SELECT tenant_id, name, value, created_at, updated_at FROM secrets;
DROP TABLE secrets;
ALTER TABLE secrets_sealed RENAME TO secrets;
