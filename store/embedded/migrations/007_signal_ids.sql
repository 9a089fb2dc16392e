-- Signal ids, as store/postgres's 012_signal_ids.sql: one row per (run, id) with what became of
-- the first sending, so a repeat is acknowledged and delivered once; a swept run takes its ids
-- with it (foreign keys are on).
CREATE TABLE signal_ids (
    run_id    TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    signal_id TEXT NOT NULL,
    delivered INTEGER NOT NULL,
    PRIMARY KEY (run_id, signal_id)
);
