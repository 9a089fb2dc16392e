-- Moves an ended run's idempotency key out of the way of a new run (SignalWithStart), as
-- store/postgres's release_run_key.sql. ?1 run, ?2 key.
UPDATE runs SET idempotency_key = NULL
WHERE id = ?1 AND idempotency_key = ?2 AND status IN ('completed', 'failed', 'cancelled', 'continued')
