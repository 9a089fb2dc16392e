SELECT count(*) FROM events WHERE run_id = ?
