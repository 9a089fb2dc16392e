-- ?1 tenant, ?2 id, ?3 created at, ?4 report.
INSERT INTO upgrades (tenant_id, id, created_at, report) VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING
