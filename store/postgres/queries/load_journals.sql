-- The journals of the claimed runs $1, in order, each with its snapshot when it has one: then
-- the snapshot comes first (snapshot true: seq, last_key as key, code, data, created_at) and the
-- journal only from the snapshot's seq on; at most $2 entries of each (the claim's window plus
-- one, which tells it whether more follow; NULL: all of them). One ordered probe of steps'
-- (run_id, seq) index per run, from seq (0 without a snapshot), that stops after $2 rows, and
-- one probe of snapshots' key, whatever the statistics say: `run_id = ANY($1)` was planned as a
-- sequential scan of all steps, both with statistics that predate the table's growth and in
-- generic plans cached while the table was small (issue 13).
-- A snapshot is taken after entry seq-1, whose key it keeps as last_key: one whose journal no
-- longer has that entry with that key (a journal cut back, or rewritten, under it) describes a
-- journal the store does not hold. It is left out, so the claim reads the journal from the top,
-- and deleted, so that a journal grown back past it cannot make it look whole again. (Entries
-- are numbered from 0 with no gap, so entry seq-1 being there means the journal holds seq.)
WITH stale AS (
    DELETE FROM snapshots d
    WHERE d.run_id = ANY($1::uuid[]) AND NOT (d.seq = 0 AND d.last_key = '' OR EXISTS (
        SELECT 1 FROM steps p WHERE p.run_id = d.run_id AND p.seq = d.seq - 1 AND p.key = d.last_key))
)
SELECT c.id, x.snapshot, x.seq, x.key, x.kind, x.status, x.output, x.error, x.attempt, x.wake_at, x.event,
    x.match, x.event_id, x.started_at, x.completed_at, x.code, x.data
FROM unnest($1::uuid[]) WITH ORDINALITY AS c(id, n)
LEFT JOIN snapshots sn ON sn.run_id = c.id AND (sn.seq = 0 AND sn.last_key = '' OR EXISTS (
    SELECT 1 FROM steps p WHERE p.run_id = sn.run_id AND p.seq = sn.seq - 1 AND p.key = sn.last_key))
CROSS JOIN LATERAL (
    SELECT true AS snapshot, sn.seq, sn.last_key AS key, NULL::text AS kind, NULL::text AS status, NULL::jsonb AS output,
        NULL::jsonb AS error, NULL::integer AS attempt, NULL::timestamptz AS wake_at, NULL::text AS event,
        NULL::jsonb AS match, NULL::bigint AS event_id, sn.created_at AS started_at, NULL::timestamptz AS completed_at,
        sn.code, sn.data
    WHERE sn.run_id IS NOT NULL
    UNION ALL
    (SELECT false, s.seq, s.key, s.kind, s.status, s.output, s.error, s.attempt, s.wake_at, coalesce(s.event, ''),
        s.match, s.event_id, s.started_at, s.completed_at, NULL::text, NULL::bytea
    FROM steps s WHERE s.run_id = c.id AND s.seq >= coalesce(sn.seq, 0) ORDER BY s.seq LIMIT $2)
) x
ORDER BY c.n, x.snapshot DESC, x.seq
