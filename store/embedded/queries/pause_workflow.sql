-- Pauses the live runs of a paused workflow (?3 '') or version, as pause_run.sql pauses one.
-- ?1 tenant, ?2 workflow, ?3 version or '', ?4 now.
UPDATE runs
SET paused_at = coalesce(paused_at, ?4),
    status = CASE WHEN lease_owner IS NULL OR lease_expires_at <= ?4 THEN 'paused' ELSE status END,
    lease_owner = CASE WHEN lease_expires_at <= ?4 THEN NULL ELSE lease_owner END,
    lease_expires_at = CASE WHEN lease_expires_at <= ?4 THEN NULL ELSE lease_expires_at END,
    updated_at = ?4
WHERE tenant_id = ?1 AND workflow = ?2 AND (?3 = '' OR version = ?3) AND status IN ('pending', 'running')
RETURNING id, status
