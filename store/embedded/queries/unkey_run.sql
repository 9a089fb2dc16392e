-- Takes an ended run's idempotency key off it (FinishAndContinue), after run_key.sql read it.
-- ?1 run.
UPDATE runs SET idempotency_key = NULL WHERE id = ?1
