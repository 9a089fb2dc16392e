INSERT INTO tenants (id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING
