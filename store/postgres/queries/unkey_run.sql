-- Takes an ending run's idempotency key off it (FinishAndContinue), returning the key ('' for
-- none), so that the run continuing it can take the key in the same transaction.
-- $1 run.
UPDATE runs r SET idempotency_key = NULL
FROM (SELECT idempotency_key FROM runs WHERE id = $1) AS o
WHERE r.id = $1
RETURNING coalesce(o.idempotency_key, '')
