-- A pending run, available now. ?1 id, ?2 tenant, ?3 workflow, ?4 version, ?5 digest, ?6 input,
-- ?7 idempotency key or null, ?8 retention days, ?9 now, ?10 deadline or null,
-- ?11 retry policy or null, ?12 attempt.
INSERT INTO runs (id, tenant_id, workflow, version, digest, status, input, idempotency_key, retention_days,
                  available_at, created_at, updated_at, deadline, retry, attempt)
VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?7, ?8, ?9, ?9, ?9, ?10, ?11, max(?12, 1))
RETURNING id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, '')
