SELECT name, version FROM workflows WHERE tenant_id = ? ORDER BY name, bound_seq
