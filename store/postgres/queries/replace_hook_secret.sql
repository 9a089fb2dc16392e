-- $1 tenant; $2 the secret as the caller read it, $3 what replaces it (the same secret sealed,
-- or rewrapped under another key). No row: the secret was rotated since it was read. created_at
-- stays: the secret is the one the tenant was given then.
UPDATE hook_secrets SET secret = $3 WHERE tenant_id = $1 AND secret = $2
