-- Completion hooks, as store/postgres's 025_hooks.sql: the hooks a tenant or a module names,
-- the tenants' signing secrets and the deliveries. A run's hooks are written by Go code in
-- every transaction that ends a run (hooks.go), not by a trigger: SQLite has no deferred ones.
CREATE TABLE hooks (
    tenant_id      TEXT NOT NULL,
    id             TEXT NOT NULL,
    source         TEXT NOT NULL,
    workflow       TEXT NOT NULL DEFAULT '',
    version        TEXT NOT NULL DEFAULT '',
    statuses       TEXT NOT NULL, -- a JSON array of run statuses
    start_workflow TEXT,
    start_version  TEXT,
    url            TEXT,
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX hooks_workflow ON hooks (tenant_id, workflow);

CREATE TABLE hook_secrets (
    tenant_id  TEXT PRIMARY KEY,
    secret     BLOB NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE hook_deliveries (
    id               TEXT PRIMARY KEY,
    tenant_id        TEXT NOT NULL,
    run_id           TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    hook_id          TEXT NOT NULL,
    kind             TEXT NOT NULL,
    target           TEXT NOT NULL,
    payload          TEXT NOT NULL,
    depth            INTEGER NOT NULL,
    status           TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    attempt_log      TEXT NOT NULL DEFAULT '[]',
    last_error       TEXT,
    started_run_id   TEXT,
    next_at          INTEGER,
    lease_owner      TEXT,
    lease_expires_at INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    UNIQUE (run_id, hook_id)
);
CREATE INDEX hook_deliveries_due ON hook_deliveries (next_at) WHERE status = 'pending';
CREATE INDEX hook_deliveries_tenant ON hook_deliveries (tenant_id, created_at);
CREATE INDEX hook_deliveries_started ON hook_deliveries (started_run_id) WHERE started_run_id IS NOT NULL;

-- The gate, as in Postgres: a run created while its tenant and workflow have a hook is
-- hooked; the end of any other run reads nothing of hooks (hooks.go).
ALTER TABLE runs ADD COLUMN hooked INTEGER NOT NULL DEFAULT 0;
CREATE TRIGGER runs_hooked AFTER INSERT ON runs
WHEN EXISTS (SELECT 1 FROM hooks h WHERE h.tenant_id = NEW.tenant_id AND h.workflow IN ('', NEW.workflow))
BEGIN
    UPDATE runs SET hooked = 1 WHERE id = NEW.id;
END;
