-- Live runs by state (issue 17: the wfhost_runs gauge, count_run_states.sql) are read through
-- partial indexes: pending and running runs through runs_ready, nondeterministic ones through
-- this one. Without it the count read the whole runs table, terminal runs included, for a
-- handful of rows. A run enters it only when a replay stops as nondeterministic, so it costs
-- the write path nothing.
CREATE INDEX runs_paused ON runs (tenant_id) WHERE status = 'nondeterministic';
