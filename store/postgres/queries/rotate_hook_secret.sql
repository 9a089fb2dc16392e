INSERT INTO hook_secrets (tenant_id, secret) VALUES ($1, $2)
ON CONFLICT (tenant_id) DO UPDATE SET secret = EXCLUDED.secret, created_at = now()
