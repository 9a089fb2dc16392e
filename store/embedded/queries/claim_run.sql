-- Leases one run, bumping the epoch that fences out whoever held it before. A lease still owned
-- has run out without a hand-back: a fault of the run's last activation (store.Claim.Faults).
-- ?1 run, ?2 owner, ?3 lease expiry, ?4 now.
UPDATE runs
SET faults = faults + CASE WHEN lease_owner IS NOT NULL THEN 1 ELSE 0 END,
    last_fault = CASE WHEN lease_owner IS NOT NULL
        THEN 'the lease of ' || lease_owner || ' ran out before it handed the run back (its host died, hung or lost the store)'
        ELSE last_fault END,
    status = 'running',
    available_at = ?3,
    lease_owner = ?2,
    lease_epoch = lease_epoch + 1,
    lease_expires_at = ?3,
    started_at = coalesce(started_at, ?4),
    activations = activations + 1,
    updated_at = ?4
WHERE id = ?1
RETURNING lease_epoch, faults, coalesce(last_fault, ''), id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, ''), paused_at
