-- Runs that continue runs (issue 14): continue-as-new and a run's own retry policy. A chain of
-- runs is linked both ways (continued_from on the new run, continued_as on the ended one);
-- attempt counts a retry chain; retry is the run's policy, handed on to its retries.
ALTER TABLE runs ADD COLUMN continued_from uuid;
ALTER TABLE runs ADD COLUMN continued_as uuid;
ALTER TABLE runs ADD COLUMN attempt integer NOT NULL DEFAULT 1;
ALTER TABLE runs ADD COLUMN retry jsonb;
