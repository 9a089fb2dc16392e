-- Faults, as store/postgres's 007_faults.sql: a run's activations in a row that ended in a
-- fault without journal progress, and the last one's reason. Any journal write resets them.
ALTER TABLE runs ADD COLUMN faults INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN last_fault TEXT;
