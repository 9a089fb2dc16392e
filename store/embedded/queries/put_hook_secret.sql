INSERT INTO hook_secrets (tenant_id, secret, created_at) VALUES (?1, ?2, ?3)
ON CONFLICT (tenant_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at
