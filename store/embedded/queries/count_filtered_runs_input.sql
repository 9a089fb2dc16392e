-- count_filtered_runs with an input filter: the statuses and inputs of the runs the other filters
-- select, for the filter to be tested in Go (jsonmatch.go). Same parameters as count_filtered_runs.
SELECT status, input
FROM runs
WHERE tenant_id = ?1
  AND (?2 = '' OR workflow = ?2)
  AND (?3 IS NULL OR created_at >= ?3)
  AND (?4 IS NULL OR created_at < ?4)
  AND (?5 = '' OR version = ?5)
  AND (?6 = '' OR idempotency_key = ?6)
  AND (?7 = '' OR id IN (SELECT run_id FROM run_parents WHERE parent_run_id = ?7))
