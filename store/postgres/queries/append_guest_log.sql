-- Keeps lines a run's guest logged, as 'guest' rows of its lifecycle log (swept with it), in
-- one statement, as far as the run's bounds leave room: $4 lines and $5 bytes of messages over
-- all its guest rows, the oldest kept (a line once kept stays). $1 tenant, $2 run, $3 a JSON
-- array of {at, level, message, stream, step} in order. One row, the number kept, when the
-- run is the tenant's; none otherwise. Two appends of one run at once (an activation that lost
-- its lease and the next) may each see the room the other takes: the bound is then passed by
-- at most one append's lines, which the engine bounds too.
WITH run AS (
    SELECT id, tenant_id FROM runs WHERE id = $2 AND tenant_id = $1
), used AS (
    SELECT count(*) AS n, coalesce(sum(octet_length(l.detail ->> 'message')), 0) AS bytes
    FROM run_log l WHERE l.run_id = $2 AND l.kind = 'guest'
), lines AS (
    SELECT e, ord, sum(octet_length(e ->> 'message')) OVER (ORDER BY ord) AS upto
    FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS t(e, ord)
), kept AS (
    INSERT INTO run_log (run_id, tenant_id, at, kind, detail)
    SELECT run.id, run.tenant_id, (lines.e ->> 'at')::timestamptz, 'guest', lines.e - 'at'
    FROM run, used, lines
    WHERE used.n + lines.ord <= $4 AND used.bytes + lines.upto <= $5
    ORDER BY lines.ord
    RETURNING 1
)
SELECT (SELECT count(*) FROM kept) FROM run
