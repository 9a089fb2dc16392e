-- No row changed: the tenant exists. ?1 id, ?2 limits, ?3 now.
INSERT INTO tenants (id, limits, created_at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING
