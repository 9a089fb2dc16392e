-- Hands the run back after a faulted activation: the lease released, the run available at ?3,
-- the fault counted with its reason ?4. Fenced. ?1 run, ?2 epoch, ?5 now.
UPDATE runs
SET lease_owner = NULL, lease_expires_at = NULL, available_at = ?3, updated_at = ?5,
    faults = faults + 1, last_fault = ?4
WHERE id = ?1 AND lease_epoch = ?2 AND status = 'running'
RETURNING tenant_id
