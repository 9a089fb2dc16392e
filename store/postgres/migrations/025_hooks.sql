-- Completion hooks (issue 16, point 4): what happens when a run ends. A hook is named by a
-- tenant (through the API, for every workflow or one) or by a module's description (onEnd,
-- ABI.md §7, for one workflow version); it either starts another workflow with the ended run
-- as input (a durable trigger) or POSTs the same to a webhook. Both are written by the
-- transaction that ends the run, so neither is lost nor made twice: a start hook's run is
-- created there, under an idempotency key derived from the ended run, and a webhook is an
-- outbox row (hook_deliveries) that a dispatcher on every host delivers under a lease.
-- store/RATIONALE.md says why it is built this way and what it costs.
CREATE TABLE hooks (
    tenant_id      text NOT NULL,
    id             text NOT NULL,
    -- source is 'tenant' (the API) or 'module' (a description's onEnd; its rows are replaced
    -- whenever the version is bound).
    source         text NOT NULL,
    -- workflow '' is every workflow of the tenant; version '' is every version.
    workflow       text NOT NULL DEFAULT '',
    version        text NOT NULL DEFAULT '',
    statuses       text[] NOT NULL,
    start_workflow text,
    start_version  text,
    url            text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CHECK ((start_workflow IS NULL) <> (url IS NULL))
);
CREATE INDEX hooks_workflow ON hooks (tenant_id, workflow);

-- A tenant's webhook signing secret: created with its first webhook or by the API, rotated by
-- the API. Every webhook delivery is signed with the secret current when it is sent.
CREATE TABLE hook_secrets (
    tenant_id  text PRIMARY KEY,
    secret     bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- One hook of one ended run: a start (delivered or failed at once, in the run's end) or a
-- webhook (pending until the dispatcher delivers it or spends its attempts). Deleted with the
-- run when the sweeper takes it. depth is how many hook starts led to the run that ended plus
-- one: a chain of start hooks (a hook to itself) ends at a bound instead of looping forever.
CREATE TABLE hook_deliveries (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id        text NOT NULL,
    run_id           uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    hook_id          text NOT NULL,
    kind             text NOT NULL,
    target           text NOT NULL,
    payload          jsonb NOT NULL,
    depth            integer NOT NULL,
    status           text NOT NULL,
    attempts         integer NOT NULL DEFAULT 0,
    attempt_log      jsonb NOT NULL DEFAULT '[]',
    last_error       text,
    started_run_id   uuid,
    next_at          timestamptz,
    lease_owner      text,
    lease_expires_at timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (run_id, hook_id)
);
CREATE INDEX hook_deliveries_due ON hook_deliveries (next_at) WHERE status = 'pending';
CREATE INDEX hook_deliveries_tenant ON hook_deliveries (tenant_id, created_at DESC);
CREATE INDEX hook_deliveries_started ON hook_deliveries (started_run_id) WHERE started_run_id IS NOT NULL;

-- The gate: a run whose tenant and workflow have no hook when it is created carries
-- hooked = false, and the end trigger below is never called for it (its WHEN reads the row
-- the end already writes). The price is this probe at creation; a hook added later reaches
-- the runs created after it.
ALTER TABLE runs ADD COLUMN hooked boolean NOT NULL DEFAULT false;

CREATE FUNCTION runs_hooked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.hooked := EXISTS (
        SELECT 1 FROM hooks h
        WHERE h.tenant_id = NEW.tenant_id AND h.workflow IN ('', NEW.workflow)
    );
    RETURN NEW;
END
$$;
CREATE TRIGGER runs_hooked BEFORE INSERT ON runs FOR EACH ROW EXECUTE FUNCTION runs_hooked();

-- hooks_ended writes a hooked run's hooks when it ends: deferred to commit, so that a run
-- ended and continued in one transaction (a retry, continue-as-new) has continued_as set and
-- fires nothing (its successor ends the chain). A start hook's run is created here, pending,
-- keyed 'hook:<run>:<hook>' (so it is made once whatever retries), and the delivery recorded
-- delivered, or failed when the workflow is unknown or the chain too deep; the run itself is
-- never changed by a hook. A webhook is left pending for the dispatcher.
CREATE FUNCTION hooks_ended() RETURNS trigger LANGUAGE plpgsql AS $$
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
        started := NULL;
        INSERT INTO runs (tenant_id, workflow, version, digest, status, input, idempotency_key, retention_days, available_at, attempt)
        VALUES (r.tenant_id, wf.name, wf.version, wf.digest, 'pending', body,
            'hook:' || r.id || ':' || h.id, coalesce(nullif(wf.retention_days, 0), r.retention_days), now(), 1)
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

CREATE CONSTRAINT TRIGGER runs_hooks_ended AFTER UPDATE OF status ON runs
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (NEW.hooked AND NEW.status IN ('completed', 'failed', 'cancelled') AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION hooks_ended();
