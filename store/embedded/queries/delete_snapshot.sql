-- A finished or cancelled run's snapshot: it never resumes from it; or one its journal no
-- longer holds the entry of (get_snapshot.sql). ?1 run.
DELETE FROM snapshots WHERE run_id = ?1
