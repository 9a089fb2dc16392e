-- Replaces the run's snapshot. ?1 run, ?2 tenant, ?3 seq, ?4 last key, ?5 code, ?6 data, ?7 now.
INSERT INTO snapshots (run_id, tenant_id, seq, last_key, code, data, created_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
ON CONFLICT (run_id) DO UPDATE
SET seq = excluded.seq, last_key = excluded.last_key, code = excluded.code, data = excluded.data,
    created_at = excluded.created_at
