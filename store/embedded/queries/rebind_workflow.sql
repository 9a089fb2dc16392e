-- Rebinding to another module (?8 true) makes the version the most recently bound.
-- ?1 tenant, ?2 name, ?3 version, ?4 digest, ?5 retention days, ?6 retry, ?7 triggers, ?8 moved.
UPDATE workflows
SET digest = ?4, retention_days = ?5, retry = ?6, triggers = ?7,
    bound_seq = CASE WHEN ?8 THEN (SELECT coalesce(max(bound_seq), 0) + 1 FROM workflows) ELSE bound_seq END
WHERE tenant_id = ?1 AND name = ?2 AND version = ?3
