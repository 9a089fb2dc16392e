-- Keeps lines a run's guest logged, as 'guest' rows of its lifecycle log (deleted with the run),
-- as far as the run's bounds leave room: ?4 lines and ?5 bytes of messages over all its guest
-- rows, the oldest kept (a line once kept stays). ?1 tenant, ?2 run, ?3 a JSON array of
-- {at (microseconds), level, message, stream, step} in order. The writer runs one write at a
-- time, so the room read is the room there is.
WITH run AS (
    SELECT id, tenant_id FROM runs WHERE id = ?2 AND tenant_id = ?1
), used AS (
    SELECT count(*) AS n, coalesce(sum(length(CAST(json_extract(detail, '$.message') AS BLOB))), 0) AS bytes
    FROM run_log WHERE run_id = ?2 AND kind = 'guest'
), lines AS (
    SELECT j.key AS ord, j.value AS e,
        sum(length(CAST(json_extract(j.value, '$.message') AS BLOB))) OVER (ORDER BY j.key) AS upto
    FROM json_each(?3) AS j
)
INSERT INTO run_log (run_id, tenant_id, at, kind, detail)
SELECT run.id, run.tenant_id, json_extract(lines.e, '$.at'), 'guest', json_remove(lines.e, '$.at')
FROM run, used, lines
WHERE used.n + lines.ord + 1 <= ?4 AND used.bytes + lines.upto <= ?5
ORDER BY lines.ord
