-- Journals a reached wait, resolved (completed with the event) or waiting.
-- ?1 run, ?2 tenant, ?3 seq, ?4 key, ?5 status, ?6 payload or null, ?7 attempt, ?8 timeout,
-- ?9 event, ?10 match, ?11 event id or null, ?12 started at, ?13 completed at or null.
INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, attempt, wake_at, event, match,
                   event_id, started_at, completed_at)
VALUES (?1, ?2, ?3, ?4, 'wait', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
ON CONFLICT (run_id, key) DO UPDATE
SET status = excluded.status, output = excluded.output, wake_at = excluded.wake_at,
    event_id = excluded.event_id, completed_at = excluded.completed_at
