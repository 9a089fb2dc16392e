-- bound_seq orders bindings over the whole database (one writer: no race).
-- ?1 tenant, ?2 name, ?3 version, ?4 digest, ?5 retention days, ?6 retry, ?7 triggers, ?8 now.
INSERT INTO workflows (tenant_id, name, version, digest, retention_days, retry, triggers, bound_seq, created_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, (SELECT coalesce(max(bound_seq), 0) + 1 FROM workflows), ?8)
