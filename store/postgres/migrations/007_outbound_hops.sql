-- The outbound audit trail keeps one row per hop of a request (the request as the guest made
-- it, then each redirect the host followed), linked by request_id; scheme and port say where
-- each hop went, since the allowlist matches them too.
ALTER TABLE outbound
    ADD COLUMN request_id text NOT NULL DEFAULT '',
    ADD COLUMN hop        integer NOT NULL DEFAULT 0,
    ADD COLUMN scheme     text NOT NULL DEFAULT '',
    ADD COLUMN port       integer NOT NULL DEFAULT 0;
