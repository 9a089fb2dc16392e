-- Locks the run row if the lease still holds. Signal, Broadcast, CommitStep and friends lock
-- this row before touching the run's steps, so the statements after this one in the same
-- transaction see every resolution committed before it, and none can slip in until commit.
SELECT true FROM runs
WHERE id = $1 AND lease_epoch = $2 AND status = 'running'
FOR UPDATE
