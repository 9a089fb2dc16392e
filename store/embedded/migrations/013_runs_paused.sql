-- Live runs by state are read through partial indexes, as store/postgres's 018_runs_paused.sql.
CREATE INDEX runs_paused ON runs (tenant_id) WHERE status = 'nondeterministic';
