-- Records a start under a flow key locked by flow_lock.sql: a concurrency slot taken ($5),
-- the rate's starts to keep ($6, null: unchanged), the debounce's pending run ($7, null:
-- unchanged).
-- $1 tenant, $2 workflow, $3 kind, $4 key, $5 slot taken, $6 starts, $7 run.
UPDATE flow_keys
SET active = active + CASE WHEN $5 THEN 1 ELSE 0 END,
    starts = coalesce($6::timestamptz[], starts),
    run_id = coalesce($7::uuid, run_id)
WHERE tenant_id = $1 AND workflow = $2 AND kind = $3 AND key = $4
