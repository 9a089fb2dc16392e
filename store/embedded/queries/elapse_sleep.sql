-- Marks the sleep a resumed pass suspended at elapsed when it is due (ResumeRun), as the pass
-- would mark it. ?1 run, ?2 entry, ?3 now.
UPDATE steps SET status = 'completed', completed_at = wake_at
WHERE run_id = ?1 AND seq = ?2 AND kind = 'sleep' AND status = 'sleeping' AND wake_at <= ?3
