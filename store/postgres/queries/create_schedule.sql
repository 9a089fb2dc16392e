-- No row back: the tenant does not exist, or has a schedule with this id.
INSERT INTO schedules (tenant_id, id, cron, time_zone, interval_ms, workflow, version, input, overlap,
                       catchup_window_ms, jitter_ms, paused, next_fire_at, due_at)
SELECT id, $2::text, $3::text, $4::text, $5::bigint, $6::text, $7::text, $8::jsonb, $9::text, $10::bigint, $11::bigint,
       $12::boolean, $13::timestamptz, $14::timestamptz
FROM tenants WHERE id = $1
ON CONFLICT (tenant_id, id) DO NOTHING
RETURNING tenant_id, id, cron, time_zone, interval_ms, workflow, version, input, overlap, catchup_window_ms, jitter_ms,
       paused, next_fire_at, due_at, buffered_fire_at, last_fire_at, last_run_id, last_error, created_at, updated_at
