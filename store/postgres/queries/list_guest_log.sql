-- A page of a run's guest log: its 'guest' lifecycle log rows after seq $3, at most $4.
SELECT seq, at, detail FROM run_log WHERE run_id = $2 AND tenant_id = $1 AND kind = 'guest' AND seq > $3 ORDER BY seq LIMIT $4
