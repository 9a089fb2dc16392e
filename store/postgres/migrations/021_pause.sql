-- Pause and resume (issue 16, point 2). A run is paused (status 'paused', which no claim
-- takes) when an operator asks, when its workflow or version is paused, or when a step's
-- attempts run out under the policy onExhausted "pause". paused_at is when the pause was
-- asked: a run a host holds is still running then, and pauses at its next durable call (the
-- host writes status 'paused' itself, HoldPaused); a run whose host died before that is held
-- by the next host that claims it, which reads paused_at.
ALTER TABLE runs ADD COLUMN paused_at timestamptz;

-- Paused runs by tenant and workflow: the wfhost_runs gauge counts them, and a workflow's
-- resume finds its runs through it. (runs_paused, from 018, is the nondeterministic runs'
-- index: it was named for the gauge's state before a run could be paused; runs_held, from
-- 003, is the leased runs'.)
CREATE INDEX runs_status_paused ON runs (tenant_id, workflow) WHERE status = 'paused';

-- A paused workflow (version '') or version: no run of it is activated, and a run created for
-- it is created paused, until it is resumed.
CREATE TABLE workflow_pauses (
    tenant_id text NOT NULL REFERENCES tenants (id),
    workflow  text NOT NULL,
    version   text NOT NULL,
    paused_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, workflow, version)
);

-- Every way a run is created (a start, a leased start, continue-as-new, a retry, a restart, a
-- signal-with-start, a broadcast's triggers, a schedule) goes through this trigger, so a run
-- of a paused workflow is created paused, not leased, whichever statement inserts it. The
-- shared lock pairs with the exclusive one a workflow's pause takes (pause_workflow_lock.sql)
-- before it pauses the workflow's live runs: a run inserted in the same instant is either seen
-- by that pause or sees its row here (the EXISTS below reads with a snapshot taken after the
-- lock, as every statement of a volatile function does), never neither.
CREATE FUNCTION runs_created_paused() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(hashtextextended(NEW.tenant_id || '/' || NEW.workflow, 16));
    IF NEW.status IN ('pending', 'running') AND EXISTS (
        SELECT 1 FROM workflow_pauses p
        WHERE p.tenant_id = NEW.tenant_id AND p.workflow = NEW.workflow AND p.version IN ('', NEW.version)
    ) THEN
        NEW.status := 'paused';
        NEW.paused_at := now();
        NEW.lease_owner := NULL;
        NEW.lease_expires_at := NULL;
        NEW.lease_epoch := 0;
        NEW.activations := 0;
        NEW.started_at := NULL;
        NEW.available_at := coalesce(NEW.available_at, now());
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER runs_created_paused BEFORE INSERT ON runs FOR EACH ROW EXECUTE FUNCTION runs_created_paused();
