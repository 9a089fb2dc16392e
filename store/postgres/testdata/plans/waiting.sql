-- The signals scenario's state, for reading the signal path's plans: wfhost.fill_runs runs of
-- tenant plan_w, each waiting for "verify" with a ten-hour timeout, reached the way the engine
-- reaches it: created leased, suspended for a 1 ms sleep, claimed again, then parked on the
-- wait. Each of those moves is an update of available_at, which runs_ready indexes, so each
-- leaves a dead index entry behind until a vacuum; the last two are in the past.
INSERT INTO tenants (id) VALUES ('plan_w') ON CONFLICT DO NOTHING;
CREATE TEMP TABLE w AS
WITH r AS (
    INSERT INTO runs (tenant_id, workflow, version, digest, status, input, retention_days, activations,
                      available_at, lease_owner, lease_epoch, lease_expires_at, created_at, started_at)
    SELECT 'plan_w', 'onboarding', 'v1', 'digest', 'running', jsonb_build_object('n', i), 7, 1,
        now() - interval '2 minutes' + i * interval '1 millisecond' + interval '30 seconds', 'plan-host', 1,
        now() - interval '2 minutes' + i * interval '1 millisecond' + interval '30 seconds',
        now() - interval '2 minutes' + i * interval '1 millisecond', now() - interval '2 minutes'
    FROM generate_series(1, current_setting('wfhost.fill_runs')::integer) i
    RETURNING id, created_at
) SELECT * FROM r;
INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, attempt, started_at, completed_at)
SELECT id, 'plan_w', 0, 'step-0', 'run', 'completed', '{"ok": true}', 1, created_at, created_at FROM w;
-- The 1 ms sleep: released, due 1 ms later.
UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL, available_at = w.created_at + interval '1 millisecond'
FROM w WHERE runs.id = w.id;
-- Claimed again.
UPDATE runs SET lease_owner = 'plan-host', lease_epoch = 2, lease_expires_at = w.created_at + interval '30 seconds',
    available_at = w.created_at + interval '30 seconds', activations = 2
FROM w WHERE runs.id = w.id;
-- Parked on the wait until its timeout.
INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, attempt, wake_at, event, started_at)
SELECT id, 'plan_w', 1, 'step-1', 'wait', 'waiting', 1, created_at + interval '10 hours', 'verify', created_at FROM w;
UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL, available_at = w.created_at + interval '10 hours'
FROM w WHERE runs.id = w.id;
