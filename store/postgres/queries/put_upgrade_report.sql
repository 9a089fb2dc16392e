-- $1 tenant, $2 id, $3 report.
INSERT INTO upgrades (tenant_id, id, report) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING
RETURNING created_at
