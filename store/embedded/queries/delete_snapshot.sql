-- A finished or cancelled run's snapshot: it never resumes from it. ?1 run.
DELETE FROM snapshots WHERE run_id = ?1
