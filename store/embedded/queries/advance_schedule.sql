-- As store/postgres's: a compare and set from the state the writer read.
UPDATE schedules SET
    next_fire_at = ?5,
    due_at = ?6,
    buffered_fire_at = ?7,
    last_fire_at = CASE WHEN ?8 IS NULL THEN last_fire_at ELSE ?9 END,
    last_run_id = COALESCE(?8, last_run_id),
    last_error = ?10,
    updated_at = ?11
WHERE tenant_id = ?1 AND id = ?2 AND next_fire_at = ?3 AND buffered_fire_at IS ?4
