-- A page of a run's lifecycle log: the entries after seq $3, at most $4, by the primary key.
SELECT seq, at, kind, host, detail FROM run_log WHERE run_id = $2 AND tenant_id = $1 AND seq > $3 ORDER BY seq LIMIT $4
