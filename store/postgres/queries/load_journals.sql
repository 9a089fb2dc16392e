-- The journals of the claimed runs $1, in order. One ordered probe of steps' (run_id, seq) index
-- per run, whatever the statistics say: `run_id = ANY($1)` was planned as a sequential scan of
-- all steps, both with statistics that predate the table's growth and in generic plans cached
-- while the table was small (issue 13).
SELECT s.run_id, s.seq, s.key, s.kind, s.status, s.output, s.error, s.attempt, s.wake_at, coalesce(s.event, ''),
    s.match, s.event_id, s.started_at, s.completed_at
FROM unnest($1::uuid[]) WITH ORDINALITY AS c(id, n)
CROSS JOIN LATERAL (
    SELECT * FROM steps WHERE steps.run_id = c.id ORDER BY steps.seq
) s
ORDER BY c.n, s.seq
