-- A continuation takes its predecessor's concurrency key (and slot). ?1 run, ?2 key.
UPDATE runs SET flow_key = ?2 WHERE id = ?1 AND flow_key IS NULL
