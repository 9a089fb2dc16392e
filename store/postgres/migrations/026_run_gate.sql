-- One gate for every run insert (issue 16): what a new run needs to know of its workflow
-- version (is it paused, has it a completion hook, has it flow control) is read from the
-- version's own workflows row, which each insert statement reads by its primary key (one
-- probe, as the workflow_pauses probe it replaces), instead of a probe of workflow_pauses
-- written into each statement, a BEFORE INSERT trigger for hooks (runs_hooked, 025) and the
-- flow column. The flags are kept by the writes that change what they summarise: a workflow's
-- pause and resume (pause.go), a hook's put and delete (hooks.go) and a version's binding
-- (modules.go), through refresh_workflow_gates.sql. store/RATIONALE.md, "One gate".

-- paused: a pause of the workflow (version '') or of this version is kept (workflow_pauses).
-- hooked: a hook of the tenant names the workflow ('' or its name) and version ('' or it).
ALTER TABLE workflows ADD COLUMN paused boolean NOT NULL DEFAULT false,
                      ADD COLUMN hooked boolean NOT NULL DEFAULT false;

UPDATE workflows w
SET paused = EXISTS (SELECT 1 FROM workflow_pauses p
                     WHERE p.tenant_id = w.tenant_id AND p.workflow = w.name AND p.version IN ('', w.version)),
    hooked = EXISTS (SELECT 1 FROM hooks h
                     WHERE h.tenant_id = w.tenant_id AND h.workflow IN ('', w.name) AND h.version IN ('', w.version));

-- The run insert now writes runs.hooked itself, from the row above: no trigger call per run.
DROP TRIGGER runs_hooked ON runs;
DROP FUNCTION runs_hooked();

-- A hook now reaches every run that ends after it is set, not only the runs created after it:
-- a hook's put marks the open runs it names (mark_hooked_runs.sql). The open runs of hooks set
-- before this migration are marked here once.
UPDATE runs r
SET hooked = true
WHERE NOT r.hooked AND r.status IN ('pending', 'running', 'paused', 'nondeterministic')
  AND EXISTS (SELECT 1 FROM hooks h
              WHERE h.tenant_id = r.tenant_id AND h.workflow IN ('', r.workflow) AND h.version IN ('', r.version));

-- The version a start hook resolved when its run ended, for a start left to the dispatcher.
ALTER TABLE hook_deliveries ADD COLUMN start_version text;

-- hooks_ended as in 025, but the run a start hook creates passes the gate as every insert does:
-- paused when its workflow is (025 created it pending), hooked when its workflow has hooks;
-- and when its workflow has flow control, which only the store's Go start path applies
-- (start.go), the start is left to the dispatcher: a pending 'start' delivery, with the version
-- resolved here, that StartHookDelivery turns into a run through that path, under the same
-- idempotency key, so it is still made once. Durable in this transaction, it cannot be lost.
CREATE OR REPLACE FUNCTION hooks_ended() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r       runs%ROWTYPE;
    h       hooks%ROWTYPE;
    wf      workflows%ROWTYPE;
    body    jsonb;
    d       integer;
    started uuid;
    woke    boolean := false;
BEGIN
    SELECT * INTO r FROM runs WHERE id = NEW.id;
    IF r.status NOT IN ('completed', 'failed', 'cancelled') OR r.continued_as IS NOT NULL THEN
        RETURN NULL;
    END IF;
    d := coalesce((SELECT depth FROM hook_deliveries WHERE started_run_id = r.id LIMIT 1), 0) + 1;
    body := jsonb_build_object('runId', r.id, 'workflow', r.workflow, 'version', r.version,
        'status', r.status, 'output', r.output, 'error', r.error, 'endedAt', r.completed_at);
    FOR h IN
        SELECT * FROM hooks
        WHERE tenant_id = r.tenant_id AND workflow IN ('', r.workflow) AND version IN ('', r.version)
          AND r.status = ANY (statuses)
        ORDER BY id
    LOOP
        IF h.url IS NOT NULL THEN
            INSERT INTO hook_deliveries (tenant_id, run_id, hook_id, kind, target, payload, depth, status, next_at)
            VALUES (r.tenant_id, r.id, h.id, 'webhook', h.url, body || jsonb_build_object('hook', h.id), d, 'pending', now())
            ON CONFLICT (run_id, hook_id) DO NOTHING;
            CONTINUE;
        END IF;
        IF d > 8 THEN
            INSERT INTO hook_deliveries (tenant_id, run_id, hook_id, kind, target, payload, depth, status, attempts, last_error)
            VALUES (r.tenant_id, r.id, h.id, 'start', h.start_workflow, body, d, 'failed', 1,
                'hook_chain_too_deep: the run ended at the end of a chain of 8 hook starts; no run was started')
            ON CONFLICT (run_id, hook_id) DO NOTHING;
            CONTINUE;
        END IF;
        SELECT * INTO wf FROM workflows
        WHERE tenant_id = r.tenant_id AND name = h.start_workflow AND (h.start_version = '' OR version = h.start_version)
        ORDER BY bound_seq DESC LIMIT 1;
        IF NOT FOUND THEN
            INSERT INTO hook_deliveries (tenant_id, run_id, hook_id, kind, target, payload, depth, status, attempts, last_error)
            VALUES (r.tenant_id, r.id, h.id, 'start', h.start_workflow, body, d, 'failed', 1,
                format('workflow_not_found: the tenant has no workflow %s%s', h.start_workflow,
                    CASE WHEN h.start_version <> '' THEN ' version ' || h.start_version ELSE '' END))
            ON CONFLICT (run_id, hook_id) DO NOTHING;
            CONTINUE;
        END IF;
        IF wf.flow IS NOT NULL THEN
            INSERT INTO hook_deliveries (tenant_id, run_id, hook_id, kind, target, payload, depth, status, next_at, start_version)
            VALUES (r.tenant_id, r.id, h.id, 'start', h.start_workflow, body, d, 'pending', now(), wf.version)
            ON CONFLICT (run_id, hook_id) DO NOTHING;
            CONTINUE;
        END IF;
        started := NULL;
        INSERT INTO runs (tenant_id, workflow, version, digest, status, input, idempotency_key, retention_days, available_at,
                          attempt, paused_at, hooked)
        VALUES (r.tenant_id, wf.name, wf.version, wf.digest, CASE WHEN wf.paused THEN 'paused' ELSE 'pending' END, body,
            'hook:' || r.id || ':' || h.id, coalesce(nullif(wf.retention_days, 0), r.retention_days), now(), 1,
            CASE WHEN wf.paused THEN now() END, wf.hooked)
        ON CONFLICT (tenant_id, workflow, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
        RETURNING id INTO started;
        IF started IS NULL THEN
            SELECT id INTO started FROM runs
            WHERE tenant_id = r.tenant_id AND workflow = wf.name AND idempotency_key = 'hook:' || r.id || ':' || h.id;
        END IF;
        INSERT INTO hook_deliveries (tenant_id, run_id, hook_id, kind, target, payload, depth, status, attempts, started_run_id)
        VALUES (r.tenant_id, r.id, h.id, 'start', h.start_workflow, body, d, 'delivered', 1, started)
        ON CONFLICT (run_id, hook_id) DO NOTHING;
        woke := true;
    END LOOP;
    IF woke THEN
        PERFORM pg_notify(TG_TABLE_SCHEMA || '_wake', 'hook');
    END IF;
    RETURN NULL;
END
$$;

-- What started a run (store.Trigger), for the starts nothing else records: a schedule's, an
-- event trigger's, a signal-with-start. Null for every other run (a client's start, a child,
-- a branch, a hook's start, a continuation, a restart), whose origin is read from the rows
-- and columns that already say it (run_trigger.sql), so it costs them nothing.
ALTER TABLE runs ADD COLUMN trigger jsonb;
