-- Pause and resume, as store/postgres's 021_pause.sql (microseconds). No trigger: the embedded
-- store has one writer, so the queries that create runs read workflow_pauses themselves
-- (create_run.sql, continue_run.sql, restart_run.sql) with no race to close.
ALTER TABLE runs ADD COLUMN paused_at INTEGER;
CREATE INDEX runs_status_paused ON runs (tenant_id, workflow) WHERE status = 'paused';
CREATE TABLE workflow_pauses (
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    workflow  TEXT NOT NULL,
    version   TEXT NOT NULL,
    paused_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, workflow, version)
);
