-- ReachWait, after lock_wait_event and fence_lock in the same transaction: take the oldest
-- event this wait may have (one signalled to the run, consumed; or a broadcast received since
-- the run was created that the run has not consumed yet, kept), journal the wait as completed
-- with it and renew the lease, or journal it as waiting and release the run until its timeout.
-- Returns no row when the lease is lost.
-- $1 run, $2 epoch, $3 lease ms, $4 seq, $5 key, $6 event, $7 match, $8 timeout,
-- $9 started at (also the resolution time), $10 attempt.
WITH run AS (
    SELECT id, tenant_id, created_at FROM runs
    WHERE id = $1 AND lease_epoch = $2 AND status = 'running'
), found AS (
    SELECT id, targeted, payload FROM (
        (SELECT e.id, true AS targeted, e.payload
         FROM events e, run
         WHERE e.run_id = run.id AND e.name = $6
           AND ($7::jsonb IS NULL OR e.payload @> $7::jsonb)
         ORDER BY e.id
         LIMIT 1)
        UNION ALL
        (SELECT e.id, false, e.payload
         FROM events e, run
         WHERE e.run_id IS NULL AND e.tenant_id = run.tenant_id AND e.name = $6
           AND e.received_at >= run.created_at
           AND ($7::jsonb IS NULL OR e.payload @> $7::jsonb)
           AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.run_id = run.id AND s.event_id = e.id)
         ORDER BY e.id
         LIMIT 1)
    ) candidates
    ORDER BY id
    LIMIT 1
), consumed AS (
    DELETE FROM events WHERE id = (SELECT id FROM found WHERE targeted)
), step AS (
    INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, attempt, wake_at, event, match,
                       event_id, started_at, completed_at)
    SELECT run.id, run.tenant_id, $4, $5, 'wait',
           CASE WHEN found.id IS NULL THEN 'waiting' ELSE 'completed' END,
           found.payload, $10, $8, $6, $7, found.id, $9,
           CASE WHEN found.id IS NULL THEN NULL ELSE $9::timestamptz END
    FROM run LEFT JOIN found ON true
    ON CONFLICT (run_id, key) DO UPDATE
    SET status = EXCLUDED.status, output = EXCLUDED.output, wake_at = EXCLUDED.wake_at,
        event_id = EXCLUDED.event_id, completed_at = EXCLUDED.completed_at
    RETURNING run_id, seq, key, kind, status, output, error, attempt, wake_at, coalesce(event, '') AS event,
        match, event_id, started_at, completed_at
), lease AS (
    UPDATE runs r
    SET lease_owner = CASE WHEN step.status = 'waiting' THEN NULL ELSE r.lease_owner END,
        lease_expires_at = CASE WHEN step.status = 'waiting' THEN NULL
                                ELSE now() + $3 * interval '1 millisecond' END,
        available_at = CASE WHEN step.status = 'waiting' THEN $8 ELSE r.available_at END,
        updated_at = now(), faults = 0, last_fault = NULL
    FROM step
    WHERE r.id = step.run_id
)
SELECT run_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at
FROM step
