-- As store/postgres's: a buffered fire time counts as due.
SELECT min(min(due_at, coalesce(buffered_fire_at, due_at))) FROM schedules WHERE NOT paused
