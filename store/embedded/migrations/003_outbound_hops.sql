-- The outbound audit trail keeps one row per hop of a request (the request as the guest made
-- it, then each redirect the host followed), linked by request_id; scheme and port say where
-- each hop went, since the allowlist matches them too.
ALTER TABLE outbound ADD COLUMN request_id TEXT NOT NULL DEFAULT '';
ALTER TABLE outbound ADD COLUMN hop INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbound ADD COLUMN scheme TEXT NOT NULL DEFAULT '';
ALTER TABLE outbound ADD COLUMN port INTEGER NOT NULL DEFAULT 0;
