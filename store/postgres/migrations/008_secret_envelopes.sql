-- Secret values are stored encrypted: the engine seals each one under a data key of its own
-- (AES-256-GCM) wrapped by the operator's key key_id (envelope encryption), so this table holds
-- ciphertext only. A row from before has key_id '' and its value in plaintext, until the
-- engine, started with a key, seals it and clears plaintext.
ALTER TABLE secrets RENAME COLUMN value TO plaintext;
ALTER TABLE secrets ALTER COLUMN plaintext DROP NOT NULL;
ALTER TABLE secrets ADD COLUMN key_id text NOT NULL DEFAULT '';
ALTER TABLE secrets ADD COLUMN data_key bytea;
ALTER TABLE secrets ADD COLUMN ciphertext bytea;
ALTER TABLE secrets ADD CONSTRAINT secrets_sealed_or_from_before CHECK (
    (key_id <> '' AND data_key IS NOT NULL AND ciphertext IS NOT NULL AND plaintext IS NULL)
    OR (key_id = '' AND data_key IS NULL AND ciphertext IS NULL AND plaintext IS NOT NULL)
);
