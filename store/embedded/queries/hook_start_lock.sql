-- A pending start delivery its dispatcher still holds for this attempt (StartHookDelivery),
-- with the ended run's retention. ?1 id, ?2 owner, ?3 attempt.
SELECT d.tenant_id, d.run_id, d.hook_id, d.target, d.payload, r.retention_days
FROM hook_deliveries d JOIN runs r ON r.id = d.run_id
WHERE d.id = ?1 AND d.lease_owner = ?2 AND d.attempts = ?3 AND d.status = 'pending' AND d.kind = 'start'
