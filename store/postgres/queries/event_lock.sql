-- Waits (shared) and broadcasts (exclusive) of one tenant's event name serialize on this lock,
-- so a wait that registers and a broadcast that arrives at the same moment always see each
-- other: the one that commits second reads what the first wrote.
SELECT CASE WHEN $3 THEN pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 0))
            ELSE pg_advisory_xact_lock_shared(hashtextextended($1 || '/' || $2, 0)) END
