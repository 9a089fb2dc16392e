-- The earliest time a live run becomes claimable: its available_at, or its lease expiry if a
-- live lease holds it past that; NULL when no live run will ever be. ?1 now.
SELECT nullif(min(
    coalesce((SELECT min(available_at) FROM runs
              WHERE status IN ('pending', 'running') AND available_at IS NOT NULL
                AND (lease_expires_at IS NULL OR lease_expires_at < ?1)), 9223372036854775807),
    coalesce((SELECT min(max(available_at, lease_expires_at)) FROM runs
              WHERE status IN ('pending', 'running') AND available_at IS NOT NULL
                AND lease_expires_at >= ?1), 9223372036854775807)),
  9223372036854775807)
