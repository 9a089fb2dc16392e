-- A resolved workflow's flow, null for none. ?1 tenant, ?2 name, ?3 version.
SELECT flow FROM workflows WHERE tenant_id = ?1 AND name = ?2 AND version = ?3
