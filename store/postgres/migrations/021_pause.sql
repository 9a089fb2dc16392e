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

-- A run of a paused workflow is created paused, not leased: every statement that inserts a run
-- (create_run.sql, create_leased_run.sql, continue_run.sql, restart_run.sql; a signal-with-start,
-- a broadcast's triggers and a schedule start through the first two) reads workflow_pauses in
-- the insert itself, one probe of this primary key, with no trigger, lock or second statement,
-- as the embedded store's do (storetest's RunsOfAPausedWorkflowAreCreatedPaused tries each).
--
-- A start racing a workflow's pause cannot escape it. The insert takes nothing but the
-- RowExclusiveLock on runs every insert takes, and takes it before the statement's snapshot
-- (Read Committed takes each statement's snapshot after its locks). The pause
-- (PauseWorkflow) keeps its row and pauses the live runs in one transaction T, then waits
-- for every transaction that held a RowExclusiveLock on runs when T had committed
-- (runs_writers_wait() below), then pauses the live runs once more. An insert whose snapshot
-- was taken after T's commit sees the pause and creates its run paused. An insert whose
-- snapshot was taken before it held its lock from before T's commit, so the wait outlasts its
-- transaction, and the second pass, a statement begun after the wait, sees its run committed
-- (or never: it rolled back). A resume (ResumeWorkflow) is the mirror: lift the pause and
-- resume, wait, resume the runs created paused by inserts that still saw the pause. The
-- price is paid by the pause, rare: a wait as long as the longest write of runs in flight.
-- Pauses and resumes of one workflow are ordered against each other by
-- pause_workflow_lock.sql, an advisory lock that no insert takes.

-- runs_writers_wait waits until every transaction (but its own) that holds a RowExclusiveLock
-- on rel when it is called has ended: Postgres's WaitForLockers, which CREATE INDEX
-- CONCURRENTLY uses and SQL cannot call, done by reading pg_locks. Unlike a LOCK TABLE it
-- blocks nobody (a LOCK TABLE in any mode that waits for writers would also queue every new
-- write of runs behind it, and would wait on autovacuum). A transaction is gone when its
-- virtual transaction id, locked by itself while it runs, is no longer in pg_locks. The poll
-- starts at 1 ms and backs off to 20 ms.
CREATE FUNCTION runs_writers_wait(rel regclass) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    waiting text[];
    pause   double precision := 0.001;
BEGIN
    SELECT coalesce(array_agg(DISTINCT l.virtualtransaction), '{}') INTO waiting
    FROM pg_locks l
    WHERE l.locktype = 'relation' AND l.relation = rel AND l.mode = 'RowExclusiveLock' AND l.granted
      AND l.pid IS DISTINCT FROM pg_backend_pid() AND l.virtualtransaction NOT LIKE '-1/%';
    WHILE EXISTS (SELECT 1 FROM pg_locks v
                  WHERE v.locktype = 'virtualxid' AND v.virtualxid = ANY (waiting) AND v.granted) LOOP
        PERFORM pg_sleep(pause);
        pause := least(pause * 2, 0.02);
    END LOOP;
    RETURN cardinality(waiting);
END
$$;
