-- Copies a run's ended journal entries before ?3 to the run ?2 (RestartRun, ForkRun): the
-- caller compares the count with ?3, so an entry not ended refuses the copy. ?1 the source run.
INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at)
SELECT ?2, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at
FROM steps WHERE run_id = ?1 AND seq < ?3 AND status IN ('completed', 'failed', 'timed_out', 'cancelled')
