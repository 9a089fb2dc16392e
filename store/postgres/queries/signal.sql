-- Signal, after lock_run: resolve the run's first waiting step (by seq) that the event
-- matches and wake the run; otherwise keep the event for the run, unless it already keeps $5.
-- A terminal run is left alone (the caller reports the conflict from lock_run's status).
-- With a signal id ($7) already taken for the run, nothing changes and the first sending's
-- outcome is returned: lock_run serialises the run's signals, so this statement's snapshot
-- sees every earlier one. Otherwise the id is recorded with this sending's outcome.
-- Returns (delivered, kept, events kept before, the first sending's delivered or null).
-- $1 tenant, $2 run, $3 event, $4 payload, $5 max kept, $6 wake channel, $7 signal id or null.
WITH earlier AS (
    SELECT delivered FROM signal_ids WHERE run_id = $2 AND signal_id = $7
), run AS (
    SELECT id FROM runs
    WHERE tenant_id = $1 AND id = $2 AND status NOT IN ('completed', 'failed', 'cancelled', 'continued')
      AND NOT EXISTS (SELECT 1 FROM earlier)
), target AS (
    -- The run's own waiting steps, by steps_waiting_run: the run id is a parameter here, not a
    -- join with run, whose plan followed the statistics into steps_waiting, every waiting step
    -- of the event in the tenant (its cost grew with the waiting runs: issue 13).
    SELECT w.run_id, w.key FROM steps w
    WHERE w.run_id = $2 AND w.status = 'waiting' AND w.event = $3
      AND (w.match IS NULL OR $4::jsonb @> w.match)
      AND EXISTS (SELECT 1 FROM run)
    ORDER BY w.seq
    LIMIT 1
), delivered AS (
    UPDATE steps s SET status = 'completed', output = $4, completed_at = now()
    FROM target
    WHERE s.run_id = target.run_id AND s.key = target.key
    RETURNING s.run_id
), woken AS (
    UPDATE runs r SET available_at = now(), updated_at = now()
    FROM delivered
    WHERE r.id = delivered.run_id
    RETURNING pg_notify($6, current_setting('application_name'))
), pending AS (
    SELECT count(*) AS n FROM events WHERE run_id = $2
), kept AS (
    INSERT INTO events (tenant_id, run_id, name, payload)
    SELECT $1, run.id, $3, $4 FROM run, pending
    WHERE NOT EXISTS (SELECT 1 FROM target) AND pending.n < $5
    RETURNING id
), recorded AS (
    INSERT INTO signal_ids (run_id, signal_id, delivered)
    SELECT run.id, $7, EXISTS (SELECT 1 FROM delivered) FROM run
    WHERE $7::text IS NOT NULL AND (EXISTS (SELECT 1 FROM delivered) OR EXISTS (SELECT 1 FROM kept))
)
SELECT EXISTS (SELECT 1 FROM delivered), EXISTS (SELECT 1 FROM kept), (SELECT n FROM pending),
       (SELECT delivered FROM earlier)
