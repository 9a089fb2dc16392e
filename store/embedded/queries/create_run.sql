-- A pending run, available now, through the gate (021_run_gate.sql): its workflow version's
-- row says whether it is created paused (its workflow or version is) and hooked (a hook names
-- it); a version with flow control inserts nothing unless ?13 (no row: the flow path,
-- flow.go). A run of no bound version passes an open gate.
-- ?1 id, ?2 tenant, ?3 workflow, ?4 version, ?5 digest, ?6 input,
-- ?7 idempotency key or null, ?8 retention days, ?9 now, ?10 deadline or null,
-- ?11 retry policy or null, ?12 attempt, ?13 insert under flow control too, ?14 trigger or null.
INSERT INTO runs (id, tenant_id, workflow, version, digest, status, input, idempotency_key, retention_days,
                  available_at, created_at, updated_at, deadline, retry, attempt, paused_at, hooked, trigger)
SELECT ?1, ?2, ?3, ?4, ?5, CASE WHEN coalesce(w.paused, 0) THEN 'paused' ELSE 'pending' END, ?6, ?7, ?8, ?9, ?9, ?9, ?10, ?11, max(?12, 1),
    CASE WHEN coalesce(w.paused, 0) THEN ?9 END, coalesce(w.hooked, 0), ?14
FROM (SELECT 1) AS one LEFT JOIN workflows w ON w.tenant_id = ?2 AND w.name = ?3 AND w.version = ?4
WHERE w.flow IS NULL OR ?13
RETURNING id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, ''), paused_at
