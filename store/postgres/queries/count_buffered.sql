SELECT count(*) FROM events WHERE run_id = $1
