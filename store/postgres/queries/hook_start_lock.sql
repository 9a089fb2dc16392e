-- A pending start delivery (026_run_gate.sql) its dispatcher still holds for this attempt,
-- locked for StartHookDelivery, with the ended run's retention (a started run's default, as
-- hooks_ended gives it). No row: the lease ran out and another dispatcher took it, or it ended.
-- $1 id, $2 owner, $3 attempt.
SELECT d.tenant_id, d.run_id, d.hook_id, d.target, coalesce(d.start_version, ''), d.payload, r.retention_days
FROM hook_deliveries d JOIN runs r ON r.id = d.run_id
WHERE d.id = $1 AND d.lease_owner = $2 AND d.attempts = $3 AND d.status = 'pending' AND d.kind = 'start'
FOR UPDATE OF d
