-- Broadcast's first statement: the exclusive side of the event-name lock. Whichever of a
-- broadcast and a wait of the same name commits second reads what the first wrote, because its
-- next statement takes a new snapshot after the lock is granted: the event cannot fall between
-- "the wait registers" and "the event arrives". The key includes the schema only so that
-- parallel test schemas do not contend. $1 tenant, $2 event name, $3 schema.
SELECT pg_advisory_xact_lock(hashtextextended($3 || '/' || $1 || '/' || $2, 0))
