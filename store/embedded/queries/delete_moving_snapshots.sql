-- The snapshots of the runs move_live_runs.sql is about to move to new code (a snapshot is of
-- the old code): the same runs, by the same test. ?1 tenant, ?2 workflow, ?3 version, ?4 digest.
DELETE FROM snapshots WHERE run_id IN (
    SELECT id FROM runs
    WHERE tenant_id = ?1 AND workflow = ?2 AND version = ?3 AND digest <> ?4
      AND status IN ('pending', 'running', 'nondeterministic')
)
