-- ReachWait's first statement: the shared side of the lock that serializes waits and
-- broadcasts of one tenant's event name (see lock_broadcast_event.sql). Waits share it, so they
-- never block each other; a broadcast takes it alone. The tenant comes from the run.
-- $1 run, $2 event name, $3 schema.
SELECT pg_advisory_xact_lock_shared(hashtextextended($3 || '/' || tenant_id || '/' || $2, 0))
FROM runs WHERE id = $1
