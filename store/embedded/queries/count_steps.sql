SELECT count(*) FROM steps WHERE run_id = ?1
