-- Moves an ended run's idempotency key out of the way of a new run (SignalWithStart): the key
-- names the newest run of the workflow; the ended one is kept, found by its id.
-- $1 run, $2 key.
UPDATE runs SET idempotency_key = NULL
WHERE id = $1 AND idempotency_key = $2 AND status IN ('completed', 'failed', 'cancelled', 'continued')
