INSERT INTO events (tenant_id, run_id, name, payload) VALUES ($1, $2, $3, $4)
