-- A resume ($3 false) sets the next fire time from now and drops a buffered one; a pause
-- leaves them, so the schedule shows where it stood.
UPDATE schedules SET
    paused = $3::boolean,
    next_fire_at = CASE WHEN $3 THEN next_fire_at ELSE $4 END,
    due_at = CASE WHEN $3 THEN due_at ELSE $5 END,
    buffered_fire_at = CASE WHEN $3 THEN buffered_fire_at END,
    updated_at = now()
WHERE tenant_id = $1 AND id = $2
RETURNING tenant_id, id, cron, time_zone, interval_ms, workflow, version, input, overlap, catchup_window_ms, jitter_ms,
       paused, next_fire_at, due_at, buffered_fire_at, last_fire_at, last_run_id, last_error, created_at, updated_at
