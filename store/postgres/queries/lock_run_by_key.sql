-- Locks the run an idempotency key names, for SignalWithStart: its status cannot change until
-- the transaction ends. $1 tenant, $2 workflow, $3 key.
SELECT id, status FROM runs WHERE tenant_id = $1 AND workflow = $2 AND idempotency_key = $3 FOR UPDATE
