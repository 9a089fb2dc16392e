-- Child workflow runs, as store/postgres's 020_children.sql: the link of a child run to the
-- parent step that started it. Resolving the parent's step when the child's chain ends is Go
-- code in every end of a run (children.go), not a trigger. runs.is_child marks a linked run
-- (set with its link, never cleared): a finish returns it, so a run that is no child looks
-- nothing up in run_parents when it ends.
ALTER TABLE runs ADD COLUMN is_child INTEGER NOT NULL DEFAULT 0;
CREATE TABLE run_parents (
    run_id        TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    parent_run_id TEXT NOT NULL,
    parent_key    TEXT NOT NULL,
    parent_close  TEXT NOT NULL,
    awaited       INTEGER NOT NULL,
    created_at    INTEGER NOT NULL
);
CREATE INDEX run_parents_parent ON run_parents (parent_run_id, created_at);
