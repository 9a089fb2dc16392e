SELECT id, tenant_id, run_id, step, method, host, path, status, error, bytes_out, bytes_in, duration_ms, at,
       request_id, hop, scheme, port
FROM outbound WHERE tenant_id = ? AND run_id = ? ORDER BY id
