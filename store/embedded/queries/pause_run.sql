-- Pauses a live run, as store/postgres's pause_run.sql: one no host holds at once, a held one
-- asked (paused_at). ?1 tenant, ?2 run, ?3 now.
UPDATE runs
SET paused_at = coalesce(paused_at, ?3),
    status = CASE WHEN lease_owner IS NULL OR lease_expires_at <= ?3 THEN 'paused' ELSE status END,
    lease_owner = CASE WHEN lease_expires_at <= ?3 THEN NULL ELSE lease_owner END,
    lease_expires_at = CASE WHEN lease_expires_at <= ?3 THEN NULL ELSE lease_expires_at END,
    updated_at = ?3
WHERE tenant_id = ?1 AND id = ?2 AND status IN ('pending', 'running')
RETURNING id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, ''), paused_at
