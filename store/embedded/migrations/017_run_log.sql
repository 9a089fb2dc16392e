-- The lifecycle log, as store/postgres's 022_run_log.sql (read it for the rules): written by
-- triggers in the write that makes the change. Times are microseconds, as everywhere here,
-- in the detail objects too (the store turns them into times when it reads them). The
-- foreign key takes a run's log with it when the run is swept, as it takes its steps: in
-- SQLite its check is one primary-key probe in the same file.
--
-- A run's created entry is no row, as in Postgres: list_run_log.sql reads it from the run's
-- row (runs.created_by below: the host a run was created leased to) as the entry with seq 1,
-- and shows each row with its rowid plus one, so the rows follow it.
ALTER TABLE runs ADD COLUMN created_by TEXT;
CREATE TABLE run_log (
    seq       INTEGER PRIMARY KEY, -- the rowid: grows over every run, as Postgres's identity column
    run_id    TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    tenant_id TEXT NOT NULL,
    at        INTEGER NOT NULL,
    kind      TEXT NOT NULL,
    host      TEXT NOT NULL DEFAULT '',
    detail    TEXT
);
-- Postgres's primary key (run_id, seq): the reads by run, and the cascade's.
CREATE INDEX run_log_by_run ON run_log (run_id, seq);

CREATE TRIGGER run_log_append_only BEFORE UPDATE ON run_log
BEGIN
    SELECT RAISE(ABORT, 'run_log is append-only');
END;

-- One row at most per update, the first kind that matches, as run_log_changed() in Postgres.
CREATE TRIGGER run_log_changed AFTER UPDATE ON runs
WHEN NEW.status <> OLD.status OR NEW.lease_epoch <> OLD.lease_epoch
    OR (OLD.lease_owner IS NOT NULL AND NEW.lease_owner IS NULL)
    OR (NEW.cancel_requested_at IS NOT NULL AND OLD.cancel_requested_at IS NULL)
    OR NEW.digest <> OLD.digest
    OR (NEW.lease_owner IS NULL AND NEW.available_at IS NOT OLD.available_at)
BEGIN
    INSERT INTO run_log (run_id, tenant_id, at, kind, host, detail)
    SELECT NEW.id, NEW.tenant_id, NEW.updated_at, c.kind,
        CASE WHEN c.kind = 'claimed' THEN NEW.lease_owner
             WHEN c.kind IN ('ended', 'nondeterministic', 'paused', 'resumed', 'upgraded', 'faulted', 'suspended', 'released')
                 THEN coalesce(OLD.lease_owner, '')
             ELSE '' END,
        nullif(json_patch('{}', CASE c.kind
            WHEN 'ended' THEN json_object('status', NEW.status, 'code', json_extract(NEW.error, '$.code'))
            WHEN 'nondeterministic' THEN json_object('message', json_extract(NEW.error, '$.message'))
            WHEN 'upgraded' THEN json_object('version', NEW.version, 'digest', NEW.digest,
                'from', CASE WHEN OLD.status = 'nondeterministic' THEN NULL ELSE OLD.version END)
            WHEN 'claimed' THEN json_object('activation', NEW.activations, 'expiredLeaseOf', OLD.lease_owner)
            WHEN 'faulted' THEN json_object('reason', NEW.last_fault, 'until', NEW.available_at)
            WHEN 'suspended' THEN json_object('why', CASE c.tail_kind WHEN 'run' THEN 'retry' ELSE c.tail_kind END,
                'step', c.tail_key, 'until', NEW.available_at)
            WHEN 'cancel_requested' THEN json_object('graceUntil', NEW.cancel_grace_until)
            ELSE '{}' END), '{}')
    FROM (
        SELECT t.key AS tail_key, t.kind AS tail_kind, CASE
            WHEN NEW.status <> OLD.status AND (NEW.status IN ('completed', 'failed', 'cancelled', 'continued', 'nondeterministic', 'paused')
                                              OR OLD.status IN ('paused', 'nondeterministic')) THEN CASE
                WHEN NEW.status IN ('completed', 'failed', 'cancelled', 'continued') THEN 'ended'
                WHEN NEW.status = 'nondeterministic' THEN 'nondeterministic'
                WHEN NEW.status = 'paused' THEN 'paused'
                WHEN OLD.status = 'paused' THEN 'resumed'
                ELSE 'upgraded' END
            WHEN NEW.lease_epoch <> OLD.lease_epoch THEN 'claimed'
            WHEN OLD.lease_owner IS NOT NULL AND NEW.lease_owner IS NULL THEN CASE
                WHEN NEW.faults > OLD.faults THEN 'faulted'
                WHEN t.status IN ('sleeping', 'waiting', 'retrying') THEN 'suspended'
                ELSE 'released' END
            WHEN NEW.cancel_requested_at IS NOT NULL AND OLD.cancel_requested_at IS NULL THEN 'cancel_requested'
            WHEN NEW.digest <> OLD.digest THEN 'upgraded'
            WHEN NEW.lease_owner IS NULL AND NEW.available_at IS NOT NULL
                 AND (OLD.available_at IS NULL OR NEW.available_at < OLD.available_at) THEN 'woken'
            END AS kind
        FROM (SELECT 1) LEFT JOIN (
            SELECT key, kind, status FROM steps
            WHERE run_id = NEW.id AND OLD.lease_owner IS NOT NULL AND NEW.lease_owner IS NULL
            ORDER BY seq DESC LIMIT 1
        ) t ON true
    ) c
    WHERE c.kind IS NOT NULL;
END;

-- Journal entries the log keeps, as run_log_step() in Postgres: not a restart's copied entries
-- (written before the new run's first lease, epoch 0). A retried attempt's row has no time of
-- its own (its completed_at is empty), so it takes the database's clock.
CREATE TRIGGER run_log_step_inserted AFTER INSERT ON steps
WHEN (NEW.status IN ('retrying', 'failed', 'timed_out') OR (NEW.kind = 'wait' AND NEW.status = 'completed'))
    AND (SELECT lease_epoch FROM runs WHERE id = NEW.run_id) > 0
BEGIN
    INSERT INTO run_log (run_id, tenant_id, at, kind, detail)
    VALUES (NEW.run_id, NEW.tenant_id,
        coalesce(NEW.completed_at, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)),
        CASE NEW.status WHEN 'retrying' THEN 'step_retrying' WHEN 'failed' THEN 'step_failed'
                        WHEN 'timed_out' THEN 'wait_timed_out' ELSE 'event_delivered' END,
        json_patch('{}', json_object(
            'step', NEW.key,
            'attempt', CASE WHEN NEW.kind = 'run' THEN NEW.attempt END,
            'code', json_extract(NEW.error, '$.code'),
            'message', json_extract(NEW.error, '$.message'),
            'until', CASE WHEN NEW.status = 'retrying' THEN NEW.wake_at END,
            'event', NEW.event,
            'eventId', NEW.event_id)));
END;

CREATE TRIGGER run_log_step_updated AFTER UPDATE ON steps
WHEN (NEW.status <> OLD.status OR NEW.attempt <> OLD.attempt)
    AND (NEW.status IN ('retrying', 'failed', 'timed_out') OR (NEW.kind = 'wait' AND NEW.status = 'completed'))
BEGIN
    INSERT INTO run_log (run_id, tenant_id, at, kind, detail)
    VALUES (NEW.run_id, NEW.tenant_id,
        coalesce(NEW.completed_at, CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)),
        CASE NEW.status WHEN 'retrying' THEN 'step_retrying' WHEN 'failed' THEN 'step_failed'
                        WHEN 'timed_out' THEN 'wait_timed_out' ELSE 'event_delivered' END,
        json_patch('{}', json_object(
            'step', NEW.key,
            'attempt', CASE WHEN NEW.kind = 'run' THEN NEW.attempt END,
            'code', json_extract(NEW.error, '$.code'),
            'message', json_extract(NEW.error, '$.message'),
            'until', CASE WHEN NEW.status = 'retrying' THEN NEW.wake_at END,
            'event', NEW.event,
            'eventId', NEW.event_id)));
END;
