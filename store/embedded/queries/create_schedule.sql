-- No row changed: the tenant has a schedule with this id (a missing tenant fails the foreign key).
INSERT INTO schedules (tenant_id, id, cron, time_zone, interval_ms, workflow, version, input, overlap,
                       catchup_window_ms, jitter_ms, paused, next_fire_at, due_at, created_at, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?15)
ON CONFLICT (tenant_id, id) DO NOTHING
