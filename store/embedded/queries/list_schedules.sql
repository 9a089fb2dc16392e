SELECT tenant_id, id, cron, time_zone, interval_ms, workflow, version, input, overlap, catchup_window_ms, jitter_ms,
       paused, next_fire_at, due_at, buffered_fire_at, last_fire_at, last_run_id, last_error, created_at, updated_at
FROM schedules WHERE tenant_id = ?1 ORDER BY id
