-- Deletes a batch of terminal runs past their retention; their steps and events go with them
-- (ON DELETE CASCADE), and their lifecycle log here (run_log has no foreign key, so a log row
-- costs no lookup when it is written). SKIP LOCKED lets several hosts sweep at once, and a run
-- some transaction still holds is simply left for the next batch. $1 batch size.
WITH doomed AS (
    SELECT id FROM runs
    WHERE expires_at < now()
    ORDER BY expires_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED
), unlogged AS (
    DELETE FROM run_log l USING doomed WHERE l.run_id = doomed.id
)
DELETE FROM runs r USING doomed WHERE r.id = doomed.id
