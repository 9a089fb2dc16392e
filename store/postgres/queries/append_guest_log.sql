-- Keeps lines a run's guest logged, as 'guest' rows of its lifecycle log (swept with it), in
-- one statement, as far as the run's bounds leave room (guest_log_rows, migration 027): $4
-- lines and $5 bytes of messages over all its guest rows. $1 tenant, $2 run, $3 a JSON array
-- of {at, level, message, stream, step} in order. One row, the number kept, when the run is
-- the tenant's; none otherwise. A run's end keeps its activation's lines itself (finish.sql).
WITH run AS (
    SELECT id, tenant_id FROM runs WHERE id = $2 AND tenant_id = $1
), kept AS (
    INSERT INTO run_log (run_id, tenant_id, at, kind, detail)
    SELECT run.id, run.tenant_id, g.line_at, 'guest', g.line_detail
    FROM run, guest_log_rows(run.id, $3::jsonb, $4, $5) AS g
    ORDER BY g.line_ord
    RETURNING 1
)
SELECT (SELECT count(*) FROM kept) FROM run
