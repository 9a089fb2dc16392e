-- Records a start under a flow key, as store/postgres's flow_take.sql.
-- ?1 tenant, ?2 workflow, ?3 kind, ?4 key, ?5 slot taken, ?6 starts or null, ?7 run or null.
UPDATE flow_keys
SET active = active + CASE WHEN ?5 THEN 1 ELSE 0 END,
    starts = coalesce(?6, starts),
    run_id = coalesce(?7, run_id)
WHERE tenant_id = ?1 AND workflow = ?2 AND kind = ?3 AND key = ?4
