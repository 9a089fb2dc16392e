INSERT INTO tokens (id, tenant_id, name, hash, created_at) VALUES (?, ?, ?, ?, ?)
