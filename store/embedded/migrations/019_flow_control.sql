-- Flow control, as store/postgres's 024_flow_control.sql: the workflow's flow, a run's
-- concurrency key, the state of each key in use and each run's place under its flow. Where
-- store/postgres releases a slot in a trigger, this store does it in Go in every transaction
-- that ends a run (flow.go), as it resolves a child's parent: one primary-key lookup in
-- run_flow, which finds nothing for a run without flow control. The claim is unchanged.
ALTER TABLE workflows ADD COLUMN flow TEXT;
ALTER TABLE runs ADD COLUMN flow_key TEXT;

CREATE TABLE flow_keys (
    tenant_id TEXT NOT NULL,
    workflow  TEXT NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('concurrency', 'rate', 'debounce')),
    key       TEXT NOT NULL,
    lim       INTEGER NOT NULL DEFAULT 0,
    active    INTEGER NOT NULL DEFAULT 0,
    starts    TEXT NOT NULL DEFAULT '[]', -- JSON array of microseconds
    run_id    TEXT,
    PRIMARY KEY (tenant_id, workflow, kind, key)
);

CREATE TABLE run_flow (
    run_id       TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    tenant_id    TEXT NOT NULL,
    workflow     TEXT NOT NULL,
    flow         TEXT NOT NULL,
    priority     INTEGER NOT NULL,
    conc_key     TEXT,
    held         INTEGER NOT NULL DEFAULT 0,
    flow_order   INTEGER NOT NULL,
    rate_key     TEXT,
    rate_at      INTEGER,
    debounce_key TEXT
);
CREATE INDEX run_flow_held ON run_flow (tenant_id, workflow, conc_key, flow_order) WHERE held = 1;
