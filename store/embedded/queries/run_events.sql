-- Events signalled to the run under this name, oldest first. ?1 run, ?2 event.
SELECT id, payload FROM events WHERE run_id = ?1 AND name = ?2 ORDER BY id
