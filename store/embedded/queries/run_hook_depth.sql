SELECT coalesce((SELECT depth FROM hook_deliveries WHERE started_run_id = ?1 LIMIT 1), 0)
