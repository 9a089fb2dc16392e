-- The embedded store's schema: store/postgres's tables in SQLite. Times are INTEGER
-- microseconds since the Unix epoch (UTC), the precision Postgres keeps; JSON is TEXT, matched
-- in Go (jsonmatch.go). Every row carries the tenant it belongs to.

CREATE TABLE tenants (
    id         TEXT PRIMARY KEY,
    limits     TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL
);

-- A token is stored as the SHA-256 of its secret.
CREATE TABLE tokens (
    id         TEXT PRIMARY KEY,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    name       TEXT NOT NULL DEFAULT '',
    hash       BLOB NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX tokens_by_tenant ON tokens (tenant_id, created_at);

CREATE TABLE modules (
    tenant_id   TEXT NOT NULL REFERENCES tenants (id),
    digest      TEXT NOT NULL,
    bytes       BLOB NOT NULL,
    size        INTEGER NOT NULL,
    abi_version INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, digest)
);

-- bound_seq orders bindings: the latest version of a name is the one bound last. triggers is a
-- JSON array of event names.
CREATE TABLE workflows (
    tenant_id      TEXT NOT NULL,
    name           TEXT NOT NULL,
    version        TEXT NOT NULL,
    digest         TEXT NOT NULL,
    retention_days INTEGER NOT NULL DEFAULT 0,
    retry          TEXT NOT NULL,
    triggers       TEXT NOT NULL DEFAULT '[]',
    bound_seq      INTEGER NOT NULL,
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, name, version),
    FOREIGN KEY (tenant_id, digest) REFERENCES modules (tenant_id, digest)
);

CREATE TABLE runs (
    id               TEXT PRIMARY KEY,
    tenant_id        TEXT NOT NULL REFERENCES tenants (id),
    workflow         TEXT NOT NULL,
    version          TEXT NOT NULL,
    digest           TEXT NOT NULL,
    status           TEXT NOT NULL,
    input            TEXT NOT NULL,
    output           TEXT,
    error            TEXT,
    idempotency_key  TEXT,
    retention_days   INTEGER NOT NULL,
    activations      INTEGER NOT NULL DEFAULT 0,
    available_at     INTEGER,
    lease_owner      TEXT,
    lease_epoch      INTEGER NOT NULL DEFAULT 0,
    lease_expires_at INTEGER,
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,
    completed_at     INTEGER,
    updated_at       INTEGER NOT NULL,
    -- Set when the run becomes terminal (completed_at + retention); the sweeper walks it.
    expires_at       INTEGER
);

CREATE UNIQUE INDEX runs_idempotency ON runs (tenant_id, workflow, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
-- Claims walk the runnable runs tenant by tenant; wake-up queries walk them all.
CREATE INDEX runs_ready ON runs (tenant_id, available_at) WHERE status IN ('pending', 'running');
CREATE INDEX runs_claimable ON runs (available_at) WHERE status IN ('pending', 'running');
CREATE INDEX runs_held ON runs (tenant_id) WHERE lease_owner IS NOT NULL;
CREATE INDEX runs_by_workflow ON runs (tenant_id, workflow, created_at DESC, id DESC);
CREATE INDEX runs_by_tenant ON runs (tenant_id, created_at DESC, id DESC);
CREATE INDEX runs_expiry ON runs (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE steps (
    run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    tenant_id    TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    key          TEXT NOT NULL,
    kind         TEXT NOT NULL,
    status       TEXT NOT NULL,
    output       TEXT,
    error        TEXT,
    attempt      INTEGER NOT NULL DEFAULT 0,
    wake_at      INTEGER,
    event        TEXT,
    match        TEXT,
    event_id     INTEGER,
    started_at   INTEGER NOT NULL,
    completed_at INTEGER,
    PRIMARY KEY (run_id, key),
    UNIQUE (run_id, seq)
);
CREATE INDEX steps_waiting ON steps (tenant_id, event) WHERE status = 'waiting';
CREATE INDEX steps_event ON steps (run_id, event_id) WHERE event_id IS NOT NULL;

-- Events sent to one run (run_id set) wait here until a wait consumes them; broadcasts
-- (run_id null) stay so that waits reached later still see them. AUTOINCREMENT: ids are never
-- reused, because journal rows name the event that resolved them and waits take the oldest.
CREATE TABLE events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id   TEXT NOT NULL,
    run_id      TEXT REFERENCES runs (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    payload     TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    event_key   TEXT
);
CREATE INDEX events_for_run ON events (run_id, name, id) WHERE run_id IS NOT NULL;
CREATE INDEX events_broadcast ON events (tenant_id, name, received_at) WHERE run_id IS NULL;
CREATE UNIQUE INDEX events_key ON events (tenant_id, name, event_key) WHERE event_key IS NOT NULL;

CREATE TABLE secrets (
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    name       TEXT NOT NULL,
    value      BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

CREATE TABLE outbound (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id   TEXT NOT NULL,
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step        TEXT NOT NULL,
    method      TEXT NOT NULL,
    host        TEXT NOT NULL,
    path        TEXT NOT NULL,
    status      INTEGER NOT NULL,
    error       TEXT NOT NULL DEFAULT '',
    bytes_out   INTEGER NOT NULL,
    bytes_in    INTEGER NOT NULL,
    duration_ms REAL NOT NULL,
    at          INTEGER NOT NULL
);
CREATE INDEX outbound_by_run ON outbound (run_id, id);
