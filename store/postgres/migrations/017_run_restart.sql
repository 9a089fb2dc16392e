-- Restart (issue 16, point 3): a run started again from an ended one, from scratch or from one
-- of its steps, names the run it restarts.
ALTER TABLE runs ADD COLUMN restarted_from uuid;
