-- Schedules, as store/postgres's 016_schedules.sql (times in microseconds since the epoch).
CREATE TABLE schedules (
    tenant_id         TEXT NOT NULL REFERENCES tenants (id),
    id                TEXT NOT NULL,
    cron              TEXT NOT NULL DEFAULT '',
    time_zone         TEXT NOT NULL DEFAULT '',
    interval_ms       INTEGER NOT NULL DEFAULT 0,
    workflow          TEXT NOT NULL,
    version           TEXT NOT NULL DEFAULT '',
    input             TEXT NOT NULL,
    overlap           TEXT NOT NULL,
    catchup_window_ms INTEGER NOT NULL,
    jitter_ms         INTEGER NOT NULL DEFAULT 0,
    paused            INTEGER NOT NULL DEFAULT 0,
    next_fire_at      INTEGER NOT NULL,
    due_at            INTEGER NOT NULL,
    buffered_fire_at  INTEGER,
    last_fire_at      INTEGER,
    last_run_id       TEXT NOT NULL DEFAULT '',
    last_error        TEXT NOT NULL DEFAULT '',
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE INDEX schedules_due ON schedules (due_at) WHERE NOT paused;
