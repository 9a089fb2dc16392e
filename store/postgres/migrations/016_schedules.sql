-- Schedules (issue 16, point 1): a cron expression or an interval that starts runs of a
-- workflow. next_fire_at is the next fire time not yet handled, due_at that time plus its
-- jitter; hosts advance a row only from the state they read (advance_schedule.sql), and the
-- run a fire time starts is keyed by it, so any number of hosts start one run per fire time.
CREATE TABLE schedules (
    tenant_id         text NOT NULL REFERENCES tenants (id),
    id                text NOT NULL,
    cron              text NOT NULL DEFAULT '',
    time_zone         text NOT NULL DEFAULT '',
    interval_ms       bigint NOT NULL DEFAULT 0,
    workflow          text NOT NULL,
    version           text NOT NULL DEFAULT '',
    input             jsonb NOT NULL,
    overlap           text NOT NULL,
    catchup_window_ms bigint NOT NULL,
    jitter_ms         bigint NOT NULL DEFAULT 0,
    paused            boolean NOT NULL DEFAULT false,
    next_fire_at      timestamptz NOT NULL,
    due_at            timestamptz NOT NULL,
    buffered_fire_at  timestamptz,
    last_fire_at      timestamptz,
    last_run_id       text NOT NULL DEFAULT '',
    last_error        text NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);

-- The schedule loop's two reads: what is due (or buffered), and when the next one is.
CREATE INDEX schedules_due ON schedules (due_at) WHERE NOT paused;
CREATE INDEX schedules_buffered ON schedules (due_at) WHERE NOT paused AND buffered_fire_at IS NOT NULL;
