-- A run's idempotency key, '' for none. ?1 run.
SELECT coalesce(idempotency_key, '') FROM runs WHERE id = ?1
