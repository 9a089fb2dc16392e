-- A page of a workflow's open runs not on the module being deployed, by id, for the upgrade
-- gate (store/postgres's list_open_runs.sql). ?1 tenant, ?2 workflow, ?3 digest to leave out,
-- ?4 the id the page starts after ('': the first page), ?5 limit.
SELECT id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, ''), paused_at
FROM runs
WHERE tenant_id = ?1 AND workflow = ?2 AND digest <> ?3
  AND status IN ('pending', 'running', 'nondeterministic')
  AND id > ?4
ORDER BY id
LIMIT ?5
