-- The earliest time a live run becomes claimable: its available_at, or its lease expiry if
-- that is later. Walked tenant by tenant on runs_ready, so it reads about one row per tenant
-- plus the leased runs, never a backlog or the sleeping runs: hosts ask this whenever a claim
-- comes back short, and an idle daemon asks it on every poll.
WITH unleased AS (
    -- The earliest run that no live lease holds.
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
    -- Leased runs: one wakes at its lease expiry, which is never before its available_at, so
    -- only those available before the unleased answer can come first. (least ignores nulls.)
    -- A live lease always has an owner, so they are found by runs_held, as many as the runs
    -- held; a range of runs_ready up to the unleased answer would also step over every dead
    -- entry that moves of available_at left there since the last vacuum.
    ELSE least(at, (
        SELECT min(l.at)
        FROM tenants t CROSS JOIN LATERAL (
            SELECT min(greatest(r.available_at, r.lease_expires_at)) AS at FROM runs r
            WHERE r.tenant_id = t.id AND r.lease_owner IS NOT NULL AND r.status IN ('pending', 'running')
              AND r.available_at < coalesce(unleased.at, 'infinity') AND r.lease_expires_at >= now()
        ) l))
    END
FROM unleased
