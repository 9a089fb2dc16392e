SELECT tenant_id FROM tokens WHERE hash = ? AND revoked_at IS NULL
