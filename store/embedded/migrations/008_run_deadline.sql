-- A workflow deadline, as store/postgres's 013_run_deadline.sql (microseconds since the epoch).
ALTER TABLE runs ADD COLUMN deadline INTEGER;
