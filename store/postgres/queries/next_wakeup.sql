SELECT min(greatest(available_at, coalesce(lease_expires_at, available_at)))
FROM runs
WHERE status IN ('pending', 'running') AND available_at IS NOT NULL
