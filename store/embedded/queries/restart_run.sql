-- The run that restarts an ended one (RestartRun) or forks one (ForkRun), pending and
-- claimable now (paused when its workflow or version is).
-- ?1 id, ?2 tenant, ?3 workflow, ?4 version, ?5 digest, ?6 input, ?7 retention days, ?8 now,
-- ?9 deadline or null, ?10 retry policy or null, ?11 the source run.
INSERT INTO runs (id, tenant_id, workflow, version, digest, status, input, retention_days, available_at,
                  created_at, updated_at, deadline, retry, attempt, restarted_from, paused_at)
VALUES (?1, ?2, ?3, ?4, ?5, CASE WHEN EXISTS (SELECT 1 FROM workflow_pauses p WHERE p.tenant_id = ?2 AND p.workflow = ?3 AND p.version IN ('', ?4)) THEN 'paused' ELSE 'pending' END, ?6, ?7, ?8, ?8, ?8, ?9, ?10, 1, ?11,
        CASE WHEN EXISTS (SELECT 1 FROM workflow_pauses p WHERE p.tenant_id = ?2 AND p.workflow = ?3 AND p.version IN ('', ?4)) THEN ?8 END)
RETURNING id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, ''), paused_at
