-- Newest first; the cursor is the (created_at, id) of the last run of the previous page.
SELECT id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from::text, '') AS continued_from, coalesce(continued_as::text, '') AS continued_as, attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from::text, '') AS restarted_from, paused_at FROM runs
WHERE tenant_id = $1
  AND ($2 = '' OR workflow = $2)
  AND ($3 = '' OR status = $3)
  AND ($4::timestamptz IS NULL OR (created_at, id) < ($4, $5::uuid))
  AND ($7::timestamptz IS NULL OR created_at >= $7)
  AND ($8::timestamptz IS NULL OR created_at < $8)
  AND ($9::jsonb IS NULL OR input @> $9)
  AND ($10 = '' OR version = $10)
  AND ($11 = '' OR idempotency_key = $11)
  AND ($12 = '' OR id IN (SELECT run_id FROM run_parents WHERE parent_run_id::text = $12))
ORDER BY created_at DESC, id DESC
LIMIT $6
