-- Deletes a batch of terminal runs past their retention; their steps and events go with them
-- (ON DELETE CASCADE). SKIP LOCKED lets several hosts sweep at once, and a run some
-- transaction still holds is simply left for the next batch. $1 batch size.
WITH doomed AS (
    SELECT id FROM runs
    WHERE expires_at < now()
    ORDER BY expires_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)
DELETE FROM runs r USING doomed WHERE r.id = doomed.id
