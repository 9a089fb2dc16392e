-- Durable snapshots, as store/postgres's 011_snapshots.sql: a run's latest snapshot of its
-- guest, one per run, replaced in the fenced commit of the journal entry before it. Finishing,
-- cancelling or moving a run to new code deletes it; a swept run takes it with it (foreign
-- keys are on). data is opaque here (sealed by the engine).
CREATE TABLE snapshots (
    run_id     TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    tenant_id  TEXT NOT NULL,
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    last_key   TEXT NOT NULL,
    code       TEXT NOT NULL,
    data       BLOB NOT NULL,
    created_at INTEGER NOT NULL
);
