-- Flow control (issue 16 point 5; abi.Flow, engine/RATIONALE.md "Flow control"): a workflow's
-- concurrency, rate and debounce per key, and priority. None of it is in the claim: a run held
-- by its concurrency key has no available_at until a run of its key ends and hands it the slot
-- (flow_released below), a throttled or debounced run is created with a later available_at, and
-- a priority moves available_at earlier. The claim statement and its index are unchanged.

-- The workflow's flow (abi.Flow JSON); null: none, and its starts take the one-statement path.
ALTER TABLE workflows ADD COLUMN flow jsonb;

-- The concurrency key of a run under a concurrency limit; null for every other run. It is the
-- only thing the end-of-run trigger tests, so a run without one pays a null test per end.
ALTER TABLE runs ADD COLUMN flow_key text;

-- One row per (workflow, kind, key) in use: 'concurrency' counts the runs holding a slot
-- (active, at most lim); 'rate' keeps the start times of the key's last lim starts; 'debounce'
-- names the key's pending run. A start or an end locks its key's row, which serialises every
-- host's starts and ends of one key.
CREATE TABLE flow_keys (
    tenant_id text NOT NULL,
    workflow  text NOT NULL,
    kind      text NOT NULL CHECK (kind IN ('concurrency', 'rate', 'debounce')),
    key       text NOT NULL,
    lim       integer NOT NULL DEFAULT 0,
    active    integer NOT NULL DEFAULT 0,
    starts    timestamptz[] NOT NULL DEFAULT '{}',
    run_id    uuid,
    PRIMARY KEY (tenant_id, workflow, kind, key)
);

-- A run started under flow control: its flow as it was at its start, keys and priority;
-- held while it waits for a concurrency slot; flow_order, when it becomes claimable once it
-- has one (its priority and rate already applied), also orders the key's waiting runs.
CREATE TABLE run_flow (
    run_id       uuid PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    tenant_id    text NOT NULL,
    workflow     text NOT NULL,
    flow         jsonb NOT NULL,
    priority     integer NOT NULL,
    conc_key     text,
    held         boolean NOT NULL DEFAULT false,
    flow_order   timestamptz NOT NULL,
    rate_key     text,
    rate_at      timestamptz,
    debounce_key text
);
CREATE INDEX run_flow_held ON run_flow (tenant_id, workflow, conc_key, flow_order) WHERE held;

-- flow_released runs when a run under a concurrency limit ends. A run that waited and ended
-- (cancelled) leaves the queue. A run that held a slot hands it to its key's next waiting run
-- (lowest flow_order: priority, then age), made claimable at once and the hosts woken, or
-- gives it back; a key with no slot held is forgotten. A run ended and continued in one
-- transaction (continue-as-new, a workflow retry) passes its slot to its successor instead:
-- deferred to commit, so it reads the run as its transaction leaves it, as child_ended does.
-- The waiting run is locked before its run_flow row, as a cancel (runs, then this trigger)
-- locks them, so the two cannot deadlock; releases take one advisory lock first (below).
CREATE FUNCTION flow_released() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    mine run_flow%ROWTYPE;
    r    runs%ROWTYPE;
    slot flow_keys%ROWTYPE;
    nxt  uuid;
    at   timestamptz;
BEGIN
    SELECT * INTO mine FROM run_flow WHERE run_id = NEW.id;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF mine.held THEN
        UPDATE run_flow SET held = false WHERE run_id = NEW.id;
        RETURN NULL;
    END IF;
    SELECT * INTO r FROM runs WHERE id = NEW.id;
    IF r.continued_as IS NOT NULL THEN
        UPDATE runs SET flow_key = r.flow_key WHERE id = r.continued_as AND flow_key IS NULL;
        INSERT INTO run_flow (run_id, tenant_id, workflow, flow, priority, conc_key, held, flow_order, rate_key, rate_at, debounce_key)
        VALUES (r.continued_as, mine.tenant_id, mine.workflow, mine.flow, mine.priority, mine.conc_key, false, now(), mine.rate_key, NULL, mine.debounce_key)
        ON CONFLICT (run_id) DO NOTHING;
        RETURN NULL;
    END IF;
    -- One release at a time per schema, taken before any key row: a group commit ends many
    -- runs, of many keys, in run id order, and two batches locking two keys in opposite orders
    -- would deadlock (Postgres breaks it after deadlock_timeout, and the batch is retried a
    -- write at a time). Starts lock key rows without it, each at most one concurrency row and
    -- that one last, so they cannot close a cycle with a release.
    PERFORM pg_advisory_xact_lock(hashtextextended(TG_TABLE_SCHEMA || '/flow_released', 26));
    SELECT * INTO slot FROM flow_keys
    WHERE tenant_id = mine.tenant_id AND workflow = mine.workflow AND kind = 'concurrency' AND key = mine.conc_key
    FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF slot.active <= slot.lim THEN
        SELECT w.id, f.flow_order INTO nxt, at FROM run_flow f JOIN runs w ON w.id = f.run_id
        WHERE f.tenant_id = mine.tenant_id AND f.workflow = mine.workflow AND f.conc_key = mine.conc_key AND f.held
          AND w.status IN ('pending', 'paused')
        ORDER BY f.flow_order, f.run_id
        LIMIT 1
        FOR UPDATE OF w;
    END IF;
    IF nxt IS NOT NULL THEN
        UPDATE run_flow SET held = false WHERE run_id = nxt;
        UPDATE runs SET available_at = at, updated_at = now() WHERE id = nxt;
        PERFORM pg_notify(TG_TABLE_SCHEMA || '_wake', 'flow');
    ELSIF slot.active <= 1 THEN
        DELETE FROM flow_keys
        WHERE tenant_id = mine.tenant_id AND workflow = mine.workflow AND kind = 'concurrency' AND key = mine.conc_key;
    ELSE
        UPDATE flow_keys SET active = active - 1
        WHERE tenant_id = mine.tenant_id AND workflow = mine.workflow AND kind = 'concurrency' AND key = mine.conc_key;
    END IF;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER runs_flow_released AFTER UPDATE OF status ON runs
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.flow_key IS NOT NULL AND NEW.status IN ('completed', 'failed', 'cancelled', 'continued')
          AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION flow_released();
