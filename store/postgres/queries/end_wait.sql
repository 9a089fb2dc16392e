-- TimeoutWait and CancelWait, after fence_lock: end the step with status $6 (timed_out, with
-- the timeout output $7; cancelled, with the cancellation's error $8) if it still waits, renew
-- the lease, and return the step as it now stands (resolved by an event first, or ended now).
-- $1 run, $2 epoch, $3 lease ms, $4 key, $5 completed at.
WITH run AS (
    UPDATE runs SET lease_expires_at = now() + $3 * interval '1 millisecond', updated_at = now(),
        faults = 0, last_fault = NULL
    WHERE id = $1 AND lease_epoch = $2 AND status = 'running'
    RETURNING id
), ended AS (
    UPDATE steps s SET status = $6, output = $7, error = $8, completed_at = $5
    FROM run
    WHERE s.run_id = run.id AND s.key = $4 AND s.status = 'waiting'
    RETURNING s.run_id, s.seq, s.key, s.kind, s.status, s.output, s.error, s.attempt, s.wake_at,
        coalesce(s.event, '') AS event, s.match, s.event_id, s.started_at, s.completed_at
)
SELECT * FROM ended
UNION ALL
SELECT s.run_id, s.seq, s.key, s.kind, s.status, s.output, s.error, s.attempt, s.wake_at,
    coalesce(s.event, ''), s.match, s.event_id, s.started_at, s.completed_at
FROM steps s, run
WHERE s.run_id = run.id AND s.key = $4 AND NOT EXISTS (SELECT 1 FROM ended)
