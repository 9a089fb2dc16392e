SELECT tenant_id FROM tokens WHERE hash = $1 AND revoked_at IS NULL
