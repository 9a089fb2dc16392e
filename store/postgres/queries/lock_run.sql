-- Locks one run of the tenant and reports its status. Signal and CancelRun take this lock
-- first, so they serialize with the run's activation writes and waits, which lock it too.
SELECT status FROM runs WHERE tenant_id = $1 AND id = $2 FOR UPDATE
