-- A workflow deadline (issue 14, point 3): when the run times out whatever it is doing. The
-- engine keeps a suspended run's wake-up no later than it and fails a run it finds past it.
ALTER TABLE runs ADD COLUMN deadline timestamptz;
