-- Serializes migrators of one schema (two daemons starting at once). Session-level: it spans
-- the migrations, each applied in its own transaction. $1 schema.
SELECT pg_advisory_lock(hashtextextended('wfhost-migrate/' || $1, 0))
