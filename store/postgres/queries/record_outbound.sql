-- The run must be the tenant's: a record for anything else is silently not written.
INSERT INTO outbound (tenant_id, run_id, step, method, host, path, status, error, bytes_out, bytes_in, duration_ms, at,
                      request_id, hop, scheme, port)
SELECT tenant_id, id, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16 FROM runs WHERE tenant_id = $1 AND id = $2
