-- The whole journals of the runs $1, for the upgrade gate: one ordered probe of steps'
-- (run_id, seq) key per run, as load_journals.sql reads a claim's.
SELECT s.run_id, s.seq, s.key, s.kind, s.status, s.output, s.error, s.attempt, s.wake_at, coalesce(s.event, ''),
    s.match, s.event_id, s.started_at, s.completed_at
FROM unnest($1::uuid[]) WITH ORDINALITY AS c(id, n)
CROSS JOIN LATERAL (SELECT * FROM steps WHERE steps.run_id = c.id ORDER BY seq) s
ORDER BY c.n, s.seq
