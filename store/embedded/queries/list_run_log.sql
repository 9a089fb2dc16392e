-- A page of a run's lifecycle log: the entries after seq ?3, at most ?4, in seq order. The
-- first, created (seq 1), is read from the run's row; a row of run_log is shown with its rowid
-- plus one (017_run_log.sql), so the page of rows is still read by the index. The guest's
-- lines (kind guest) are the guest log's (list_guest_log.sql), not the store's.
SELECT seq, at, kind, host, detail FROM (
    SELECT 1 AS seq, r.created_at AS at, 'created' AS kind, coalesce(r.created_by, '') AS host,
        nullif(json_patch('{}', json_object(
            'claimed', CASE WHEN r.created_by IS NOT NULL THEN json('true') END,
            'attempt', CASE WHEN r.attempt > 1 THEN r.attempt END,
            'continuedFrom', r.continued_from,
            'restartedFrom', r.restarted_from)), '{}') AS detail
    FROM runs r
    WHERE r.id = ?2 AND r.tenant_id = ?1 AND ?3 < 1
    UNION ALL
    SELECT * FROM (
        SELECT seq + 1 AS seq, at, kind, host, detail FROM run_log
        WHERE run_id = ?2 AND tenant_id = ?1 AND seq > ?3 - 1 AND kind <> 'guest' ORDER BY run_id, seq LIMIT ?4
    )
)
ORDER BY seq
LIMIT ?4
