-- Creates the run that restarts an ended one (RestartRun) or forks one (ForkRun, $12: a live
-- source too), pending and claimable now, past the gate create_run.sql reads (026_run_gate.sql:
-- paused when its workflow or version is, hooked when a hook names it), with the source's ended journal entries before $10
-- copied, and wakes the hosts. No row: the source is not the tenant's, or is live and $12 is
-- false. The last column counts the entries copied: fewer than $10 when the source has fewer,
-- or one of them has not ended.
-- $1 tenant, $2 source, $3 workflow, $4 version, $5 digest, $6 input, $7 retention days,
-- $8 deadline, $9 retry policy, $10 entries to keep, $11 wake channel, $12 fork.
WITH source AS (
    SELECT id FROM runs
    WHERE tenant_id = $1 AND id = $2 AND ($12 OR status IN ('completed', 'failed', 'cancelled', 'continued'))
), ins AS (
    INSERT INTO runs (tenant_id, workflow, version, digest, status, input, retention_days, available_at,
                      deadline, retry, attempt, restarted_from, paused_at, hooked)
    SELECT $1, $3, $4, $5, CASE WHEN paused THEN 'paused' ELSE 'pending' END, $6, $7, now(), $8, $9, 1, source.id,
        CASE WHEN paused THEN now() END, hooked
    FROM source, (SELECT coalesce(w.paused, false) AS paused, coalesce(w.hooked, false) AS hooked
                  FROM (SELECT 1) AS one LEFT JOIN workflows w ON w.tenant_id = $1 AND w.name = $3 AND w.version = $4) AS gate
    RETURNING *
), copied AS (
    INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at)
    SELECT ins.id, s.tenant_id, s.seq, s.key, s.kind, s.status, s.output, s.error, s.attempt, s.wake_at, s.event, s.match, s.event_id, s.started_at, s.completed_at
    FROM steps s, ins
    WHERE s.run_id = $2 AND s.seq < $10 AND s.status IN ('completed', 'failed', 'timed_out', 'cancelled')
    RETURNING 1
), woken AS (
    SELECT pg_notify($11, current_setting('application_name')) FROM ins
)
SELECT id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from::text, '') AS continued_from, coalesce(continued_as::text, '') AS continued_as, attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from::text, '') AS restarted_from, paused_at, (SELECT count(*) FROM copied)
FROM ins, (SELECT count(*) FROM woken) AS n
