-- As store/postgres's: a resume sets the next fire time and drops a buffered one.
UPDATE schedules SET
    paused = ?3,
    next_fire_at = CASE WHEN ?3 THEN next_fire_at ELSE ?4 END,
    due_at = CASE WHEN ?3 THEN due_at ELSE ?5 END,
    buffered_fire_at = CASE WHEN ?3 THEN buffered_fire_at END,
    updated_at = ?6
WHERE tenant_id = ?1 AND id = ?2
