-- Fills a migrated store schema (on the search_path) with runs shaped like a long-lived
-- deployment's, for plan checks: the number of runs is the setting wfhost.fill_runs, spread
-- over the tenants plan_t0 .. plan_t7. Used by plans_test.go (tens of thousands) and by
-- testdata/plans/scale1m.sh (a million). Per hundred runs:
--   70 asleep for an hour to a week (three run steps and a sleeping sleep step),
--   15 waiting for an event (two run steps and a waiting wait step; half with a timeout),
--    5 due now (a sleep that has ended; half of them after 23 run steps, longer than the
--      journal window a claim reads, the others after three), 1 pending (created, never
--      activated, due),
--    9 completed (four steps, an expiry), except that one run in a thousand is leased by a live
--      host instead (four steps).
-- One statement: the runs and their journals in one pass. Then half the running runs of each
-- tenant get a snapshot taken at their last entry (seq 3 with four steps, 2 with three), as the
-- engine's durable snapshots leave them, so a claim's journal load reads from there; the long
-- journals at entry 4, so that what follows the snapshot is still longer than the window.
INSERT INTO tenants (id) SELECT 'plan_t' || t FROM generate_series(0, 7) t ON CONFLICT DO NOTHING;

WITH gen AS (
    SELECT i, i % 100 AS c, 'plan_t' || (i % 8) AS tenant_id,
           now() - interval '2 days' + (i % 1000) * interval '1 second' AS created
    FROM generate_series(1, current_setting('wfhost.fill_runs')::integer) i
), shaped AS (
    SELECT i, tenant_id, created,
        CASE WHEN c < 70 THEN 'sleep' WHEN c < 85 THEN 'wait' WHEN c < 90 THEN 'due'
             WHEN c < 91 THEN 'new' WHEN c < 99 OR i / 100 % 10 <> 0 THEN 'done' ELSE 'held' END AS shape
    FROM gen
), r AS (
    INSERT INTO runs (tenant_id, workflow, version, digest, status, input, retention_days, activations,
                      available_at, lease_owner, lease_epoch, lease_expires_at, created_at, started_at,
                      completed_at, expires_at, updated_at)
    SELECT tenant_id, 'onboarding', 'v1', 'digest',
        CASE shape WHEN 'new' THEN 'pending' WHEN 'done' THEN 'completed' ELSE 'running' END,
        jsonb_build_object('n', i),
        7,
        CASE shape WHEN 'new' THEN 0 ELSE 2 END,
        CASE shape
            WHEN 'sleep' THEN now() + interval '1 hour' + (i::bigint * 7919 % 604800) * interval '1 second'
            WHEN 'wait' THEN CASE WHEN i % 2 = 0 THEN now() + interval '1 day' + (i % 3600) * interval '1 second' END
            WHEN 'due' THEN now() - (i % 600) * interval '1 second'
            WHEN 'new' THEN created
            WHEN 'held' THEN now() + interval '5 minutes'
        END,
        CASE shape WHEN 'held' THEN 'plan-host' END,
        CASE shape WHEN 'new' THEN 0 ELSE 2 END,
        CASE shape WHEN 'held' THEN now() + interval '5 minutes' END,
        created,
        CASE shape WHEN 'new' THEN NULL ELSE created END,
        CASE shape WHEN 'done' THEN created + interval '1 minute' END,
        CASE shape WHEN 'done' THEN created + interval '7 days' END,
        created
    FROM shaped
    ORDER BY i
    RETURNING id, tenant_id, available_at, created_at, (input ->> 'n')::integer % 100 AS c, (input ->> 'n')::integer AS n
), j AS (
    SELECT id, tenant_id, available_at, created_at,
        CASE WHEN c < 70 THEN 4 WHEN c < 85 THEN 3 WHEN c < 90 AND n / 16 % 2 = 0 THEN 24 WHEN c < 90 THEN 4
             WHEN c < 91 THEN 0 ELSE 4 END AS nsteps,
        CASE WHEN c < 70 THEN 'sleep' WHEN c < 85 THEN 'wait' WHEN c < 90 THEN 'sleep' ELSE 'run' END AS last
    FROM r
)
INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, attempt, wake_at, event, started_at, completed_at)
SELECT j.id, j.tenant_id, s.seq, 'step-' || s.seq,
    CASE WHEN s.seq = j.nsteps - 1 THEN j.last ELSE 'run' END,
    CASE WHEN s.seq < j.nsteps - 1 OR j.last = 'run' THEN 'completed'
         WHEN j.last = 'wait' THEN 'waiting' ELSE 'sleeping' END,
    CASE WHEN s.seq < j.nsteps - 1 OR j.last = 'run' THEN '{"ok": true}'::jsonb END,
    1,
    CASE WHEN s.seq = j.nsteps - 1 AND j.last <> 'run' THEN j.available_at END,
    CASE WHEN s.seq = j.nsteps - 1 AND j.last = 'wait' THEN 'verify' END,
    j.created_at + s.seq * interval '1 second',
    CASE WHEN s.seq < j.nsteps - 1 OR j.last = 'run' THEN j.created_at + s.seq * interval '1 second' END
FROM j CROSS JOIN LATERAL generate_series(0, j.nsteps - 1) AS s(seq);

INSERT INTO snapshots (run_id, tenant_id, seq, last_key, code, data, created_at)
SELECT r.id, r.tenant_id, s.seq, 'step-' || (s.seq - 1), 'code', convert_to(repeat('s', 256), 'UTF8'), r.updated_at
FROM runs r
CROSS JOIN LATERAL (SELECT CASE WHEN max(seq) > 8 THEN 4 ELSE max(seq) END AS seq FROM steps WHERE steps.run_id = r.id) s
WHERE r.status = 'running' AND (r.input ->> 'n')::integer / 8 % 2 = 0 AND s.seq IS NOT NULL
ON CONFLICT (run_id) DO NOTHING;
