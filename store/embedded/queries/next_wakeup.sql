-- The earliest time a live run becomes claimable: its available_at, or its lease expiry if a
-- live lease holds it past that; NULL when no live run will ever be. ?1 now.
-- A live lease always has an owner (extend_lease.sql renews no other), so leased runs are read
-- through runs_held, as many as are held. Left to itself SQLite read them through
-- runs_claimable, every live run with an available_at: at 100,000 waiting runs that was 15 ms
-- per call, and hosts ask this after every claim that comes back short (issue 13).
SELECT nullif(min(
    coalesce((SELECT min(available_at) FROM runs
              WHERE status IN ('pending', 'running') AND available_at IS NOT NULL
                AND (lease_expires_at IS NULL OR lease_expires_at < ?1)), 9223372036854775807),
    coalesce((SELECT min(max(available_at, lease_expires_at)) FROM runs INDEXED BY runs_held
              WHERE lease_owner IS NOT NULL AND status IN ('pending', 'running') AND available_at IS NOT NULL
                AND lease_expires_at >= ?1), 9223372036854775807)),
  9223372036854775807)
