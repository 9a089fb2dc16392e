-- The earliest time a live run becomes claimable: its available_at, or its lease expiry if
-- that is later. Walked tenant by tenant on runs_ready so that it reads about one row per
-- tenant plus the leased runs, never a backlog or the sleeping runs: hosts ask this whenever a
-- claim comes back short, and an idle daemon asks it on every poll.
WITH unleased AS (
    -- The first run of each tenant that no live lease holds.
    SELECT min(c.available_at) AS at
    FROM tenants t CROSS JOIN LATERAL (
        SELECT r.available_at FROM runs r
        WHERE r.tenant_id = t.id AND r.status IN ('pending', 'running') AND r.available_at IS NOT NULL
          AND (r.lease_expires_at IS NULL OR r.lease_expires_at < now())
        ORDER BY r.available_at
        LIMIT 1
    ) c
)
SELECT CASE
    WHEN at <= now() THEN at
    -- Nothing is due, so every due run is leased: few rows. (least ignores nulls.)
    ELSE least(at, (
        SELECT min(l.at)
        FROM tenants t CROSS JOIN LATERAL (
            SELECT min(greatest(r.available_at, r.lease_expires_at)) AS at FROM runs r
            WHERE r.tenant_id = t.id AND r.status IN ('pending', 'running') AND r.available_at <= now()
              AND r.lease_expires_at >= now()
        ) l))
    END
FROM unleased
