-- A new run's place under its flow: its concurrency key, and available_at ?3 (null: held).
-- ?1 run, ?2 concurrency key or null, ?3 available at or null.
UPDATE runs SET flow_key = ?2, available_at = ?3 WHERE id = ?1
RETURNING id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, ''), paused_at
