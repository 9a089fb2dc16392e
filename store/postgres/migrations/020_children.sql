-- Child workflow runs (issue 14): a run started by a step of another run of the same tenant
-- (StartChild) is linked to that step here, not by columns of runs, so that no statement
-- reading runs changes. A run that continues a child (a retry, continue-as-new) gets the same
-- link, so the last run of the chain is the one that ends the parent's wait.
--
-- runs.is_child says that a run has such a link: set by link_child.sql and, for a successor,
-- by child_ended() below, never cleared. The end trigger's WHEN clause reads it from the row
-- being updated, so a run that is no child (nearly every run) queues no deferred trigger
-- event and probes nothing when it ends (BENCHMARKS.md, "What children, pause and the
-- lifecycle log cost"). A constant default adds the column without rewriting runs.
ALTER TABLE runs ADD COLUMN is_child boolean NOT NULL DEFAULT false;
CREATE TABLE run_parents (
    run_id        uuid PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    parent_run_id uuid NOT NULL,
    parent_key    text NOT NULL,
    parent_close  text NOT NULL,
    awaited       boolean NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX run_parents_parent ON run_parents (parent_run_id, created_at);

-- child_ended resolves an awaited child's parent step when the child's chain ends: deferred to
-- commit, so that it reads the run as its transaction leaves it. A run ended and continued in
-- one transaction (FinishAndContinue) has continued_as set by then: its successor takes the
-- link instead, and the parent waits on. Whatever ends a run (a finish, a cancel, a terminate)
-- updates its status, so none can miss it. The parent's wake notice carries no host's name:
-- every host, the one ending the child included, looks for work (a host ignores its own).
CREATE FUNCTION child_ended() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    link run_parents%ROWTYPE;
    r    runs%ROWTYPE;
BEGIN
    SELECT * INTO link FROM run_parents WHERE run_id = NEW.id;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT * INTO r FROM runs WHERE id = NEW.id;
    IF r.status NOT IN ('completed', 'failed', 'cancelled', 'continued') THEN
        RETURN NULL;
    END IF;
    IF r.continued_as IS NOT NULL THEN
        INSERT INTO run_parents (run_id, parent_run_id, parent_key, parent_close, awaited)
        VALUES (r.continued_as, link.parent_run_id, link.parent_key, link.parent_close, link.awaited)
        ON CONFLICT (run_id) DO NOTHING;
        UPDATE runs SET is_child = true WHERE id = r.continued_as AND NOT is_child;
        RETURN NULL;
    END IF;
    IF NOT link.awaited THEN
        RETURN NULL;
    END IF;
    IF r.status = 'completed' THEN
        UPDATE steps SET status = 'completed', output = coalesce(r.output, 'null'::jsonb), completed_at = now()
        WHERE run_id = link.parent_run_id AND key = link.parent_key AND kind = 'child' AND status = 'waiting';
    ELSE
        UPDATE steps SET status = 'failed', completed_at = now(), error = jsonb_build_object(
            'code', 'child_failed',
            'message', format('child workflow %s ended %s: %s', r.workflow, r.status,
                coalesce((r.error->>'code') || ': ' || (r.error->>'message'), 'no error')),
            'nonRetryable', true,
            'details', jsonb_build_object('runId', r.id, 'status', r.status, 'error', r.error))
        WHERE run_id = link.parent_run_id AND key = link.parent_key AND kind = 'child' AND status = 'waiting';
    END IF;
    IF FOUND THEN
        UPDATE runs SET available_at = now(), updated_at = now()
        WHERE id = link.parent_run_id AND status IN ('pending', 'running');
        PERFORM pg_notify(TG_TABLE_SCHEMA || '_wake', 'child');
    END IF;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER runs_child_ended AFTER UPDATE OF status ON runs
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (NEW.is_child AND NEW.status IN ('completed', 'failed', 'cancelled', 'continued')
          AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION child_ended();
