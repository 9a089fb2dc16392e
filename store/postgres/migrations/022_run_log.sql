-- The lifecycle log (issue 16, point 6): every run's events, append-only, written by triggers in
-- the transaction that makes the change, so no write path can change a run without its log
-- row and no code path has to remember to write one. Named run_log, not run_events: "run
-- events" already names the events signalled to a run. store/RATIONALE.md says what each
-- kind means and what it costs; in short, nothing is written per successful step.
--
-- seq is one sequence over every run: within a run, rows are ordered by it because every
-- change of a run is serialized on its row lock. No foreign key (its check would be one more
-- lookup and lock per row); the sweeper deletes a run's rows with it (sweep_expired.sql).
-- The primary key is the only index: the log is read by run, from a cursor.
--
-- A run's first entry, created, is no row here: it is read from the run's own row
-- (list_run_log.sql), whose columns it shows are written once, by the insert: created_at,
-- attempt, continued_from, restarted_from and created_by below. It is the entry with seq 1,
-- which no row here has (the identity starts at 2), so it is first in every run's log and a
-- cursor passes it as it passes a row. A start, leased or not, so writes no log row and calls
-- no trigger (BENCHMARKS.md, "What children, pause and the lifecycle log cost").
CREATE TABLE run_log (
    run_id    uuid NOT NULL,
    seq       bigint GENERATED ALWAYS AS IDENTITY (START WITH 2),
    tenant_id text NOT NULL,
    at        timestamptz NOT NULL DEFAULT now(),
    kind      text NOT NULL,
    host      text NOT NULL DEFAULT '',
    detail    jsonb,
    PRIMARY KEY (run_id, seq)
);

-- Append-only: a row is never changed. Deleting is the sweeper's (a run's rows go with it).
CREATE FUNCTION run_log_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'run_log is append-only' USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER run_log_append_only BEFORE UPDATE ON run_log
    FOR EACH ROW EXECUTE FUNCTION run_log_refuse_update();

-- created_by: the host a run was created leased to (create_leased_run.sql), claimed in its
-- created entry; null when it was created unleased. Never changed after the insert.
ALTER TABLE runs ADD COLUMN created_by text;

-- Every other change of a run that the log keeps, at most one row per update, first match
-- wins: a status change that ends, pauses, resumes or revives the run; a claim (a new lease
-- epoch); a lease handed back (faulted when a fault was counted, suspended when the run's last
-- journal entry is unfinished, released otherwise); a cancel asked for; a move to another module (the upgrade gate); and a wake-up
-- ahead of time by someone else's write (a signal, a broadcast). The WHEN clause keeps the
-- common writes (lease renewals, journal progress) from calling the function at all.
CREATE FUNCTION run_log_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k text;
    h text := '';
    d jsonb;
    tail record;
BEGIN
    IF NEW.status <> OLD.status AND (NEW.status IN ('completed', 'failed', 'cancelled', 'continued', 'nondeterministic', 'paused')
                                     OR OLD.status IN ('paused', 'nondeterministic')) THEN
        h := coalesce(OLD.lease_owner, '');
        IF NEW.status IN ('completed', 'failed', 'cancelled', 'continued') THEN
            k := 'ended';
            d := jsonb_build_object('status', NEW.status, 'code', NEW.error ->> 'code');
        ELSIF NEW.status = 'nondeterministic' THEN
            k := 'nondeterministic';
            d := jsonb_build_object('message', NEW.error ->> 'message');
        ELSIF NEW.status = 'paused' THEN
            k := 'paused';
        ELSIF OLD.status = 'paused' THEN
            k := 'resumed';
        ELSE
            k := 'upgraded';
            d := jsonb_build_object('version', NEW.version, 'digest', NEW.digest);
        END IF;
    ELSIF NEW.lease_epoch <> OLD.lease_epoch THEN
        k := 'claimed';
        h := coalesce(NEW.lease_owner, '');
        -- A lease taken over after it ran out: the host that lost it, and the fault counted.
        d := jsonb_build_object('activation', NEW.activations, 'expiredLeaseOf', OLD.lease_owner);
    ELSIF OLD.lease_owner IS NOT NULL AND NEW.lease_owner IS NULL THEN
        h := OLD.lease_owner;
        IF NEW.faults > OLD.faults THEN
            k := 'faulted';
            d := jsonb_build_object('reason', NEW.last_fault, 'until', NEW.available_at);
        ELSE
            SELECT s.key, s.kind, s.status INTO tail FROM steps s WHERE s.run_id = NEW.id ORDER BY s.seq DESC LIMIT 1;
            IF tail.status IN ('sleeping', 'waiting', 'retrying') THEN
                k := 'suspended';
                d := jsonb_build_object('why', CASE tail.kind WHEN 'run' THEN 'retry' ELSE tail.kind END,
                    'step', tail.key, 'until', NEW.available_at);
            ELSE
                k := 'released';
            END IF;
        END IF;
    ELSIF NEW.cancel_requested_at IS NOT NULL AND OLD.cancel_requested_at IS NULL THEN
        k := 'cancel_requested';
        d := jsonb_build_object('graceUntil', NEW.cancel_grace_until);
    ELSIF NEW.digest <> OLD.digest THEN
        k := 'upgraded';
        d := jsonb_build_object('version', NEW.version, 'digest', NEW.digest, 'from', OLD.version);
    ELSIF NEW.lease_owner IS NULL AND NEW.available_at IS NOT NULL
          AND (OLD.available_at IS NULL OR NEW.available_at < OLD.available_at) THEN
        k := 'woken';
    ELSE
        RETURN NULL;
    END IF;
    INSERT INTO run_log (run_id, tenant_id, at, kind, host, detail)
    VALUES (NEW.id, NEW.tenant_id, NEW.updated_at, k, h, nullif(jsonb_strip_nulls(d), '{}'::jsonb));
    RETURN NULL;
END $$;
--
-- Deferred to the commit: a statement that journals the step a run suspends at and releases
-- the run (suspend_step.sql) updates runs first, so an immediate trigger would log the
-- suspension before the step's own entry (step_retrying) and before the step is there to say
-- why. At the commit every entry of the transaction is in, as in the embedded store, which
-- writes the step first.
CREATE CONSTRAINT TRIGGER run_log_changed AFTER UPDATE ON runs
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW
    WHEN (NEW.status <> OLD.status OR NEW.lease_epoch <> OLD.lease_epoch
          OR (OLD.lease_owner IS NOT NULL AND NEW.lease_owner IS NULL)
          OR (NEW.cancel_requested_at IS NOT NULL AND OLD.cancel_requested_at IS NULL)
          OR NEW.digest <> OLD.digest
          OR (NEW.lease_owner IS NULL AND NEW.available_at IS DISTINCT FROM OLD.available_at))
    EXECUTE FUNCTION run_log_changed();

-- A journal entry the log keeps: a run step's failed attempt (retried or final), a wait timed
-- out, and an event delivered to a wait. A completed run step or sleep writes nothing. A
-- restart copies its source's journal into the new run before any lease (epoch 0): copied
-- entries are the source's history, not the new run's, and are not logged again.
CREATE FUNCTION run_log_step() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' AND (SELECT r.lease_epoch FROM runs r WHERE r.id = NEW.run_id) = 0 THEN
        RETURN NULL;
    END IF;
    INSERT INTO run_log (run_id, tenant_id, at, kind, detail)
    VALUES (NEW.run_id, NEW.tenant_id, now(),
        CASE NEW.status WHEN 'retrying' THEN 'step_retrying' WHEN 'failed' THEN 'step_failed'
                        WHEN 'timed_out' THEN 'wait_timed_out' ELSE 'event_delivered' END,
        jsonb_strip_nulls(jsonb_build_object(
            'step', NEW.key,
            'attempt', CASE WHEN NEW.kind = 'run' THEN NEW.attempt END,
            'code', NEW.error ->> 'code',
            'message', NEW.error ->> 'message',
            'until', CASE WHEN NEW.status = 'retrying' THEN NEW.wake_at END,
            'event', NEW.event,
            'eventId', NEW.event_id)));
    RETURN NULL;
END $$;
CREATE TRIGGER run_log_step_inserted AFTER INSERT ON steps
    FOR EACH ROW
    WHEN (NEW.status IN ('retrying', 'failed', 'timed_out') OR (NEW.kind = 'wait' AND NEW.status = 'completed'))
    EXECUTE FUNCTION run_log_step();
CREATE TRIGGER run_log_step_updated AFTER UPDATE ON steps
    FOR EACH ROW
    WHEN ((NEW.status <> OLD.status OR NEW.attempt <> OLD.attempt)
          AND (NEW.status IN ('retrying', 'failed', 'timed_out') OR (NEW.kind = 'wait' AND NEW.status = 'completed')))
    EXECUTE FUNCTION run_log_step();
