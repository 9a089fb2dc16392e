-- One open run's whole journal, for the upgrade gate. ?1 run.
SELECT run_id, seq, key, kind, status, output, error, attempt, wake_at, coalesce(event, ''), match, event_id, started_at, completed_at
FROM steps WHERE run_id = ?1 ORDER BY seq
