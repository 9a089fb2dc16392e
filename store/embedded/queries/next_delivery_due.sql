SELECT min(max(next_at, coalesce(lease_expires_at, next_at))) FROM hook_deliveries WHERE status = 'pending'
