-- The runs ListRuns would list, counted by status (store.Store.CountRuns).
SELECT status, count(*) FROM runs
WHERE tenant_id = $1
  AND ($2 = '' OR workflow = $2)
  AND ($3::timestamptz IS NULL OR created_at >= $3)
  AND ($4::timestamptz IS NULL OR created_at < $4)
  AND ($5::jsonb IS NULL OR input @> $5)
  AND ($6 = '' OR version = $6)
  AND ($7 = '' OR idempotency_key = $7)
  AND ($8 = '' OR id IN (SELECT run_id FROM run_parents WHERE parent_run_id::text = $8))
GROUP BY status
