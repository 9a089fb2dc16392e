-- A bound workflow's flow (abi.Flow JSON, null: none). ?1 tenant, ?2 name, ?3 version, ?4 flow.
UPDATE workflows SET flow = ?4 WHERE tenant_id = ?1 AND name = ?2 AND version = ?3
