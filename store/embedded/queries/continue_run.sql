-- The run that continues an ended one (FinishAndContinue), pending and claimable at ?9, through
-- the gate create_run.sql reads (paused when its workflow or version is, hooked when a hook
-- names it; its flow slot it takes from the ended run, flow.go).
-- ?1 id, ?2 tenant, ?3 workflow, ?4 version, ?5 digest, ?6 input, ?7 idempotency key or null,
-- ?8 retention days, ?9 available at, ?10 now, ?11 deadline or null, ?12 retry policy or null,
-- ?13 attempt, ?14 the ended run.
INSERT INTO runs (id, tenant_id, workflow, version, digest, status, input, idempotency_key, retention_days,
                  available_at, created_at, updated_at, deadline, retry, attempt, continued_from, paused_at, hooked)
SELECT ?1, ?2, ?3, ?4, ?5, CASE WHEN coalesce(w.paused, 0) THEN 'paused' ELSE 'pending' END, ?6, ?7, ?8, ?9, ?10, ?10, ?11, ?12, max(?13, 1), ?14,
    CASE WHEN coalesce(w.paused, 0) THEN ?10 END, coalesce(w.hooked, 0)
FROM (SELECT 1) AS one LEFT JOIN workflows w ON w.tenant_id = ?2 AND w.name = ?3 AND w.version = ?4
RETURNING id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, ''), paused_at
