-- A flow key's row, created with the workflow's current limit (?5), as store/postgres's
-- flow_lock.sql (one writer: no lock needed). Returns (active, limit, starts, run or '').
-- ?1 tenant, ?2 workflow, ?3 kind, ?4 key, ?5 limit.
INSERT INTO flow_keys (tenant_id, workflow, kind, key, lim)
VALUES (?1, ?2, ?3, ?4, ?5)
ON CONFLICT (tenant_id, workflow, kind, key) DO UPDATE SET lim = excluded.lim
RETURNING active, lim, starts, coalesce(run_id, '')
