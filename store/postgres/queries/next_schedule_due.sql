SELECT min(due_at) FROM schedules WHERE NOT paused
