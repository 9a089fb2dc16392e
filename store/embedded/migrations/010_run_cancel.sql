-- A cancel the workflow can handle, as store/postgres's 015_run_cancel.sql (microseconds).
ALTER TABLE runs ADD COLUMN cancel_requested_at INTEGER;
ALTER TABLE runs ADD COLUMN cancel_grace_until INTEGER;
