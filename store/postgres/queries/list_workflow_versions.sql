SELECT name, version FROM workflows WHERE tenant_id = $1 ORDER BY name, bound_seq
