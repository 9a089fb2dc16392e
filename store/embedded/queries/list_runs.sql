-- Newest first; the cursor is the (created_at, id) of the last run of the previous page.
-- ?1 tenant, ?2 workflow or '', ?3 status or '', ?4 ?5 cursor or nulls, ?6 limit (-1: none),
-- ?7 since or null, ?8 until or null, ?9 version or '', ?10 idempotency key or '', ?11 parent run
-- or ''.
SELECT id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, ''), paused_at
FROM runs
WHERE tenant_id = ?1
  AND (?2 = '' OR workflow = ?2)
  AND (?3 = '' OR status = ?3)
  AND (?4 IS NULL OR (created_at, id) < (?4, ?5))
  AND (?7 IS NULL OR created_at >= ?7)
  AND (?8 IS NULL OR created_at < ?8)
  AND (?9 = '' OR version = ?9)
  AND (?10 = '' OR idempotency_key = ?10)
  AND (?11 = '' OR id IN (SELECT run_id FROM run_parents WHERE parent_run_id = ?11))
ORDER BY created_at DESC, id DESC
LIMIT ?6
