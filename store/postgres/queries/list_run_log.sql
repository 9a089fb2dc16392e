-- A page of a run's lifecycle log: the entries after seq $3, at most $4, by the primary key.
-- The guest's lines (kind guest) are the guest log's (list_guest_log.sql), not the store's.
SELECT seq, at, kind, host, detail FROM run_log WHERE run_id = $2 AND tenant_id = $1 AND seq > $3 AND kind <> 'guest' ORDER BY seq LIMIT $4
