-- A run already leased to the host that starts it, as claim_run.sql would lease it (epoch 1,
-- one activation), created_by that host (its log's created entry, 017_run_log.sql).
-- ?1 id, ?2 tenant, ?3 workflow, ?4 version, ?5 digest, ?6 input,
-- ?7 idempotency key or null, ?8 retention days, ?9 now, ?10 owner, ?11 lease expiry,
-- ?12 deadline or null, ?13 retry policy or null, ?14 attempt, ?15 hooked (the gate the
-- caller read from the workflow's row, 021_run_gate.sql), ?16 trigger or null.
INSERT INTO runs (id, tenant_id, workflow, version, digest, status, input, idempotency_key, retention_days,
                  available_at, lease_owner, lease_epoch, lease_expires_at, started_at, activations,
                  created_at, updated_at, deadline, retry, attempt, created_by, hooked, trigger)
VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6, ?7, ?8, ?11, ?10, 1, ?11, ?9, 1, ?9, ?9, ?12, ?13, max(?14, 1), ?10, ?15, ?16)
RETURNING lease_epoch, id, tenant_id, workflow, version, digest, status, input, output, error, coalesce(idempotency_key, ''), retention_days, activations, available_at, created_at, started_at, completed_at, updated_at, deadline, coalesce(continued_from, ''), coalesce(continued_as, ''), attempt, retry, cancel_requested_at, cancel_grace_until, coalesce(restarted_from, ''), paused_at
