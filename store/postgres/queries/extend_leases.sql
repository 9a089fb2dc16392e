-- Renews the leases $1/$2 still hold and returns every one of them that is still held: renewed
-- now, or skipped because a writer holds its run row at this moment. The renewal never waits
-- for a row lock: it would hold the rows it has renewed while it waits, and a group-commit
-- batch, a broadcast or a hotfix deploy that holds the awaited row and wants one of those
-- would deadlock with it (40P01, seen under load). A row some writer holds is being written by
-- its own activation (a commit, which renews the lease itself when it runs low, a suspension
-- or a finish, which release it), by a broadcast or a signal resolving its wait, or by a
-- cancel; the next heartbeat renews it if it is still leased. Skipped rows are reported held
-- as long as the statement's snapshot says so, so the caller never stops an activation
-- because of a lock. $1 run ids, $2 epochs, $3 lease ms.
-- Runs are found by `id = ANY($1)` as well as by the join with the unnested pairs: the join
-- alone was planned from statistics, and with a few hundred leases and stale ones it read runs
-- by sequential scan; the array is estimated from the primary key's uniqueness, whatever the
-- statistics, so runs are read by index, as many as the batch (the check at the end too: Postgres
-- may run that EXISTS as one hashed scan of every run).
WITH wanted AS (
    SELECT * FROM unnest($1::uuid[], $2::bigint[]) AS l(id, epoch)
), renewable AS (
    SELECT r.id FROM runs r JOIN wanted w ON r.id = w.id AND r.lease_epoch = w.epoch
    WHERE r.id = ANY($1::uuid[]) AND r.status = 'running'
    FOR UPDATE OF r SKIP LOCKED
), renewed AS (
    UPDATE runs r
    SET lease_expires_at = now() + $3 * interval '1 millisecond'
    FROM renewable
    WHERE r.id = renewable.id
    RETURNING r.id
)
SELECT w.id, w.epoch FROM wanted w
WHERE EXISTS (SELECT 1 FROM renewed WHERE renewed.id = w.id)
   OR EXISTS (SELECT 1 FROM runs r WHERE r.id = w.id AND r.lease_epoch = w.epoch AND r.status = 'running'
              AND r.id = ANY($1::uuid[]))
