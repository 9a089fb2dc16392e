-- Restart, as store/postgres's 017_run_restart.sql.
ALTER TABLE runs ADD COLUMN restarted_from TEXT;
