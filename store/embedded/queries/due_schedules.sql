SELECT tenant_id, id, cron, time_zone, interval_ms, workflow, version, input, overlap, catchup_window_ms, jitter_ms,
       paused, next_fire_at, due_at, buffered_fire_at, last_fire_at, last_run_id, last_error, created_at, updated_at
FROM schedules WHERE NOT paused AND (due_at <= ?1 OR buffered_fire_at IS NOT NULL)
ORDER BY due_at LIMIT ?2
