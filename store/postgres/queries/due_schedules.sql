-- Both halves use a partial index: due ones by due_at, and the few that keep a buffered fire
-- time (their last run still live) so the loop can start it once that run ends.
SELECT * FROM (
    SELECT tenant_id, id, cron, time_zone, interval_ms, workflow, version, input, overlap, catchup_window_ms, jitter_ms,
       paused, next_fire_at, due_at, buffered_fire_at, last_fire_at, last_run_id, last_error, created_at, updated_at
    FROM schedules WHERE NOT paused AND due_at <= $1
    UNION
    SELECT tenant_id, id, cron, time_zone, interval_ms, workflow, version, input, overlap, catchup_window_ms, jitter_ms,
       paused, next_fire_at, due_at, buffered_fire_at, last_fire_at, last_run_id, last_error, created_at, updated_at
    FROM schedules WHERE NOT paused AND buffered_fire_at IS NOT NULL
) s ORDER BY due_at LIMIT $2
