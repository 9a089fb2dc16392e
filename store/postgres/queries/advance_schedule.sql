-- Compare and set: only from the state the writer read, so of the hosts handling one fire
-- time one writes and the rest match no row.
UPDATE schedules SET
    next_fire_at = $5,
    due_at = $6,
    buffered_fire_at = $7,
    last_fire_at = CASE WHEN $8::text IS NULL THEN last_fire_at ELSE $9::timestamptz END,
    last_run_id = COALESCE($8, last_run_id),
    last_error = $10,
    updated_at = now()
WHERE tenant_id = $1 AND id = $2 AND next_fire_at = $3 AND buffered_fire_at IS NOT DISTINCT FROM $4::timestamptz
