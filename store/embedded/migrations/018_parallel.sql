-- Parallel branches, as store/postgres's 023_parallel.sql: a parallel step's join (run_forks)
-- and each branch's place in it (run_branches). Recording a branch's end and deciding the join
-- is Go code in every end of a run (parallel.go, called where children's ends are), not a
-- trigger.
CREATE TABLE run_forks (
    parent_run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    fork_key      TEXT NOT NULL,
    join_mode     TEXT NOT NULL,
    branches      INTEGER NOT NULL,
    first_branch  INTEGER NOT NULL DEFAULT -1,
    decided       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (parent_run_id, fork_key)
);

-- status: held, live, then completed, failed or cancelled with the branch's output or error.
CREATE TABLE run_branches (
    run_id        TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    parent_run_id TEXT NOT NULL,
    fork_key      TEXT NOT NULL,
    branch        INTEGER NOT NULL,
    status        TEXT NOT NULL,
    output        TEXT,
    error         TEXT,
    UNIQUE (parent_run_id, fork_key, branch)
);
