-- Live runs by tenant and state (store.RunState), in the order of precedence the states are
-- documented in: paused, running (a live lease), waiting (a step waits for an event), sleeping
-- (not due yet), queued. A leased run's available_at is its lease's end, so the lease is
-- looked at before the due time. Two parts, so that each reads a partial index of live runs
-- (runs_ready, runs_paused) and never the terminal runs, however many are kept. ?1 now.
SELECT r.tenant_id,
       CASE
           WHEN r.lease_owner IS NOT NULL AND r.lease_expires_at >= ?1 THEN 'running'
           WHEN EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.status = 'waiting') THEN 'waiting'
           WHEN r.available_at IS NULL OR r.available_at > ?1 THEN 'sleeping'
           ELSE 'queued'
       END AS state,
       count(*)
FROM runs r
WHERE r.status IN ('pending', 'running')
GROUP BY 1, 2
UNION ALL
SELECT tenant_id, 'paused', count(*) FROM runs WHERE status IN ('nondeterministic', 'paused') GROUP BY 1
