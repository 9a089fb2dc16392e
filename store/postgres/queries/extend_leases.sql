-- Renews the leases $1/$2 still hold and returns every one of them that is still held: renewed
-- now, or skipped because a writer holds its run row at this moment. The renewal never waits
-- for a row lock: it would hold the rows it has renewed while it waits, and a group-commit
-- batch, a broadcast or a hotfix deploy that holds the awaited row and wants one of those
-- would deadlock with it (40P01, seen under load). A row some writer holds is being written by
-- its own activation (a commit, which renews the lease itself when it runs low, a suspension
-- or a finish, which release it), by a broadcast or a signal resolving its wait, or by a
-- cancel; the next heartbeat renews it if it is still leased. Skipped rows are reported held
-- as long as the statement's snapshot says so, so the caller never stops an activation
-- because of a lock. A lease its run has handed back (a suspension or a release: no owner,
-- same epoch) is not held and never renewed: a renewal that raced the suspension used to give
-- the sleeping run a lease nobody held, and no claim took it until that ran out, however soon
-- it was due or signalled (the signal scenario's runs delivered up to a lease late, issue 13).
-- SKIP LOCKED does not cover one case: a row whose version the statement saw was updated since
-- (a batch's commit), whose newer version Postgres locks by waiting for its updater ("while
-- locking updated version"). So the caller sends the leases in run id order, the order every
-- other statement that locks several runs takes them in: such a wait cannot close a cycle.
-- $1 run ids, $2 epochs (in run id order), $3 lease ms.
-- Every run is found by its own probe of the primary key (a LATERAL subquery with a locking
-- clause or a LIMIT is planned per row): joined with the unnested pairs, or matched by
-- id = ANY, runs were read by sequential scan, or by a scan of all of runs_ready, when the
-- statistics were stale or missing.
WITH wanted AS (
    SELECT * FROM unnest($1::uuid[], $2::bigint[]) AS l(id, epoch)
), renewable AS (
    SELECT r.id FROM wanted w CROSS JOIN LATERAL (
        SELECT r.id FROM runs r
        WHERE r.id = w.id AND r.lease_epoch = w.epoch AND r.status = 'running' AND r.lease_owner IS NOT NULL
        FOR UPDATE SKIP LOCKED
    ) r
), renewed AS (
    UPDATE runs r
    SET lease_expires_at = now() + $3 * interval '1 millisecond'
    FROM renewable
    WHERE r.id = renewable.id
    RETURNING r.id
)
SELECT w.id, w.epoch FROM wanted w
LEFT JOIN LATERAL (
    SELECT true AS held FROM runs r
    WHERE r.id = w.id AND r.lease_epoch = w.epoch AND r.status = 'running' AND r.lease_owner IS NOT NULL
    LIMIT 1
) h ON true
WHERE h.held OR EXISTS (SELECT 1 FROM renewed WHERE renewed.id = w.id)
