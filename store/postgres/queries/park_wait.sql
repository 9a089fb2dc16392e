-- ParkWait, after fence_lock: if the step still waits, release the run until $4 (null: until
-- an event); if an event resolved it since the claim, keep and renew the lease instead. Returns
-- the step as it stands; no row when the run has no such step.
-- $1 run, $2 epoch, $3 lease ms, $4 wake at, $5 key.
WITH step AS (
    SELECT s.run_id, s.seq, s.key, s.kind, s.status, s.output, s.error, s.attempt, s.wake_at,
        coalesce(s.event, '') AS event, s.match, s.event_id, s.started_at, s.completed_at
    FROM steps s JOIN runs r ON r.id = s.run_id
    WHERE s.run_id = $1 AND s.key = $5 AND r.lease_epoch = $2 AND r.status = 'running'
), lease AS (
    UPDATE runs r
    SET lease_owner = CASE WHEN step.status = 'waiting' THEN NULL ELSE r.lease_owner END,
        lease_expires_at = CASE WHEN step.status = 'waiting' THEN NULL
                                ELSE now() + $3 * interval '1 millisecond' END,
        available_at = CASE WHEN step.status = 'waiting' THEN $4 ELSE r.available_at END,
        updated_at = now(),
        -- A wait an event resolved is journal progress: the fault count starts again.
        faults = CASE WHEN step.status = 'waiting' THEN r.faults ELSE 0 END,
        last_fault = CASE WHEN step.status = 'waiting' THEN r.last_fault END
    FROM step
    WHERE r.id = step.run_id
)
SELECT run_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at
FROM step
