-- A run's waiting steps on an event, by seq. ?1 run, ?2 event.
SELECT key, match FROM steps WHERE run_id = ?1 AND status = 'waiting' AND event = ?2 ORDER BY seq
