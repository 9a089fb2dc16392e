-- The tenant's signing secret, stored first when it has none ($2 not null). created: this
-- statement stored it.
WITH ins AS (
    INSERT INTO hook_secrets (tenant_id, secret)
    SELECT $1, $2::bytea WHERE $2::bytea IS NOT NULL
    ON CONFLICT (tenant_id) DO NOTHING
    RETURNING secret
)
SELECT secret, true FROM ins
UNION ALL
SELECT secret, false FROM hook_secrets WHERE tenant_id = $1 AND NOT EXISTS (SELECT 1 FROM ins)
