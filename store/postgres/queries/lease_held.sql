-- Whether the lease still holds the run (a fenced write that matched no row asks why).
-- $1 run, $2 epoch.
SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1 AND lease_epoch = $2 AND status = 'running')
