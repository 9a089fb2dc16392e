-- Resumes a paused run (unpause_run in runs.go has checked it may), or withdraws the pause
-- asked of a running one, moving it to ?3 and ?4 (its own version and digest when not moved).
-- ?1 tenant, ?2 run, ?3 version, ?4 digest, ?5 now.
UPDATE runs
SET status = CASE WHEN status <> 'paused' THEN status WHEN activations > 0 THEN 'running' ELSE 'pending' END,
    paused_at = NULL, version = ?3, digest = ?4, updated_at = ?5
WHERE tenant_id = ?1 AND id = ?2
RETURNING id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, ''), paused_at
