-- Locks a flow key's row, creating it, with its limit set to the workflow's current one
-- ($5; a concurrency limit lowered by a deploy takes effect as slots free). Every start and
-- end of the key passes here, so this lock serialises them across hosts.
-- Returns (active, limit, the rate's last starts, the debounce's pending run or '').
-- $1 tenant, $2 workflow, $3 kind, $4 key, $5 limit.
INSERT INTO flow_keys (tenant_id, workflow, kind, key, lim)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (tenant_id, workflow, kind, key) DO UPDATE SET lim = EXCLUDED.lim
RETURNING active, lim, starts, coalesce(run_id::text, '')
