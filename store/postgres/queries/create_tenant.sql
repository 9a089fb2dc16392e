-- Creates a tenant and its first token in one statement; no row means the tenant exists.
-- $1 id, $2 limits, $3 token id, $4 token name, $5 token hash.
WITH t AS (
    INSERT INTO tenants (id, limits) VALUES ($1, $2) ON CONFLICT DO NOTHING
    RETURNING id, limits, created_at
), tok AS (
    INSERT INTO tokens (id, tenant_id, name, hash) SELECT $3, id, $4, $5 FROM t RETURNING id
)
SELECT t.id, t.limits, t.created_at FROM t, (SELECT count(*) FROM tok) AS n
