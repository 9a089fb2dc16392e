-- Parallel branches (issue 14 point 2, ABI.md §4.18): parallel_run forks one run per branch
-- (ForkBranches), each a child of the parent (run_parents) whose journal starts as a copy of
-- the parent's. run_forks holds a parallel step's join; run_branches each branch's place in
-- it and, once it ended, its end. Their own tables, and their own trigger below, so that no
-- statement or trigger of migrations 020-022 changes.
CREATE TABLE run_forks (
    parent_run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    fork_key      text NOT NULL,
    join_mode     text NOT NULL,
    branches      integer NOT NULL,
    first_branch  integer NOT NULL DEFAULT -1,
    decided       boolean NOT NULL DEFAULT false,
    PRIMARY KEY (parent_run_id, fork_key)
);

-- status: held (not claimable: maxConcurrent branches run already), live, then completed,
-- failed or cancelled with the branch run's output or error.
CREATE TABLE run_branches (
    run_id        uuid PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    parent_run_id uuid NOT NULL,
    fork_key      text NOT NULL,
    branch        integer NOT NULL,
    status        text NOT NULL,
    output        jsonb,
    error         jsonb,
    UNIQUE (parent_run_id, fork_key, branch)
);

-- branch_ended records a branch's end and decides its fork's join, deferred to commit as
-- child_ended is, so that it reads the run as its transaction leaves it. The fork's row is
-- locked first: branches ending at once decide in turn, and exactly one decides. Decided, the
-- parent's step is resolved (store.Store.ForkBranches says how) and the parent woken;
-- undecided, the held branch of the lowest index is made claimable in the ended one's slot.
-- The message and details of branch_failed are store.BranchFailure's. A branch is a child
-- (runs.is_child, set by fork_branch.sql), so the trigger's WHEN spares every other run's end.
CREATE FUNCTION branch_ended() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    b       run_branches%ROWTYPE;
    f       run_forks%ROWTYPE;
    r       runs%ROWTYPE;
    ended   text;
    n_ok    integer;
    n_bad   integer;
    outcome text;
    result  jsonb;
    nxt     uuid;
BEGIN
    SELECT * INTO b FROM run_branches WHERE run_id = NEW.id;
    IF NOT FOUND OR b.status NOT IN ('held', 'live') THEN
        RETURN NULL;
    END IF;
    SELECT * INTO r FROM runs WHERE id = NEW.id;
    IF r.status NOT IN ('completed', 'failed', 'cancelled', 'continued') THEN
        RETURN NULL;
    END IF;
    SELECT * INTO f FROM run_forks WHERE parent_run_id = b.parent_run_id AND fork_key = b.fork_key FOR UPDATE;
    ended := CASE r.status WHEN 'completed' THEN 'completed' WHEN 'cancelled' THEN 'cancelled' ELSE 'failed' END;
    UPDATE run_branches
    SET status = ended, error = r.error,
        output = CASE WHEN ended = 'completed' THEN coalesce(r.output, 'null'::jsonb) END
    WHERE run_id = NEW.id;
    IF NOT FOUND OR f.decided IS NOT FALSE THEN
        RETURN NULL;
    END IF;
    IF ended = 'completed' AND f.first_branch < 0 THEN
        f.first_branch := b.branch;
        UPDATE run_forks SET first_branch = b.branch
        WHERE parent_run_id = b.parent_run_id AND fork_key = b.fork_key;
    END IF;
    SELECT count(*) FILTER (WHERE status = 'completed'), count(*) FILTER (WHERE status IN ('failed', 'cancelled'))
    INTO n_ok, n_bad
    FROM run_branches WHERE parent_run_id = b.parent_run_id AND fork_key = b.fork_key;
    outcome := CASE f.join_mode
        WHEN 'all' THEN CASE WHEN ended <> 'completed' THEN 'fail' WHEN n_ok = f.branches THEN 'ok' END
        WHEN 'first' THEN CASE WHEN ended = 'completed' THEN 'ok' WHEN n_bad = f.branches THEN 'fail' END
        ELSE CASE WHEN n_ok + n_bad = f.branches THEN 'ok' END
    END;
    IF outcome IS NULL THEN
        UPDATE run_branches SET status = 'live'
        WHERE run_id = (
            SELECT run_id FROM run_branches
            WHERE parent_run_id = b.parent_run_id AND fork_key = b.fork_key AND status = 'held'
            ORDER BY branch LIMIT 1)
        RETURNING run_id INTO nxt;
        IF nxt IS NOT NULL THEN
            UPDATE runs SET available_at = now(), updated_at = now() WHERE id = nxt AND status = 'pending';
            PERFORM pg_notify(TG_TABLE_SCHEMA || '_wake', 'branch');
        END IF;
        RETURN NULL;
    END IF;
    UPDATE run_forks SET decided = true WHERE parent_run_id = b.parent_run_id AND fork_key = b.fork_key;
    IF outcome = 'ok' THEN
        SELECT jsonb_build_object('first', f.first_branch, 'branches', jsonb_agg(CASE
            WHEN status = 'completed' THEN jsonb_build_object('status', 'completed', 'output', output)
            WHEN status IN ('failed', 'cancelled') THEN jsonb_build_object('status', 'failed', 'error', error)
            ELSE '{"status": "cancelled"}'::jsonb END ORDER BY branch))
        INTO result
        FROM run_branches WHERE parent_run_id = b.parent_run_id AND fork_key = b.fork_key;
        UPDATE steps SET status = 'completed', output = result, completed_at = now()
        WHERE run_id = b.parent_run_id AND key = b.fork_key AND kind = 'parallel' AND status = 'waiting';
    ELSE
        UPDATE steps SET status = 'failed', completed_at = now(), error = jsonb_build_object(
            'code', 'branch_failed',
            'message', format('branch %s ended %s: %s', b.branch, r.status,
                coalesce((r.error->>'code') || ': ' || (r.error->>'message'), 'no error')),
            'nonRetryable', true,
            'details', jsonb_build_object('branch', b.branch, 'runId', r.id, 'status', r.status, 'error', r.error))
        WHERE run_id = b.parent_run_id AND key = b.fork_key AND kind = 'parallel' AND status = 'waiting';
    END IF;
    IF FOUND THEN
        UPDATE runs SET available_at = now(), updated_at = now()
        WHERE id = b.parent_run_id AND status IN ('pending', 'running');
        PERFORM pg_notify(TG_TABLE_SCHEMA || '_wake', 'branch');
    END IF;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER runs_branch_ended AFTER UPDATE OF status ON runs
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (NEW.is_child AND NEW.status IN ('completed', 'failed', 'cancelled', 'continued') AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION branch_ended();
