-- JournalPage: up to $4 entries of the run's journal from entry $3 on (the page asked for plus
-- one, which tells whether more follow), read under the lease. One row with no step (seq null)
-- when the lease holds and there are none; no row when it does not hold. One ordered probe of
-- steps' (run_id, seq) index that stops after $4 rows. $1 run, $2 epoch, $3 from, $4 limit.
SELECT r.id, s.seq, s.key, s.kind, s.status, s.output, s.error, s.attempt, s.wake_at, coalesce(s.event, ''),
    s.match, s.event_id, s.started_at, s.completed_at
FROM runs r
LEFT JOIN LATERAL (
    SELECT * FROM steps WHERE steps.run_id = r.id AND steps.seq >= $3 ORDER BY steps.seq LIMIT $4
) s ON true
WHERE r.id = $1 AND r.lease_epoch = $2 AND r.status = 'running'
ORDER BY s.seq
