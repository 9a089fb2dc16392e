-- The runs ListRuns would list, counted by status (store.Store.CountRuns).
-- ?1 tenant, ?2 workflow or '', ?3 since or null, ?4 until or null, ?5 version or '',
-- ?6 idempotency key or '', ?7 parent run or ''.
SELECT status, count(*)
FROM runs
WHERE tenant_id = ?1
  AND (?2 = '' OR workflow = ?2)
  AND (?3 IS NULL OR created_at >= ?3)
  AND (?4 IS NULL OR created_at < ?4)
  AND (?5 = '' OR version = ?5)
  AND (?6 = '' OR idempotency_key = ?6)
  AND (?7 = '' OR id IN (SELECT run_id FROM run_parents WHERE parent_run_id = ?7))
GROUP BY status
