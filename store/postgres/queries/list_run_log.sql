-- A page of a run's lifecycle log: the entries after seq $3, at most $4, in seq order. The
-- first, created (seq 1), is read from the run's row (022_run_log.sql); the rest are run_log's
-- rows, by its primary key. The guest's lines (kind guest) are the guest log's
-- (list_guest_log.sql), not the store's.
SELECT seq, at, kind, host, detail FROM (
    SELECT 1::bigint AS seq, r.created_at AS at, 'created' AS kind, coalesce(r.created_by, '') AS host,
        nullif(jsonb_strip_nulls(jsonb_build_object(
            'claimed', CASE WHEN r.created_by IS NOT NULL THEN true END,
            'attempt', CASE WHEN r.attempt > 1 THEN r.attempt END,
            'continuedFrom', r.continued_from,
            'restartedFrom', r.restarted_from)), '{}'::jsonb) AS detail
    FROM runs r
    WHERE r.id = $2 AND r.tenant_id = $1 AND $3::bigint < 1
    UNION ALL
    (SELECT seq, at, kind, host, detail FROM run_log WHERE run_id = $2 AND tenant_id = $1 AND seq > $3 AND kind <> 'guest' ORDER BY seq LIMIT $4)
) e
ORDER BY seq
LIMIT $4
