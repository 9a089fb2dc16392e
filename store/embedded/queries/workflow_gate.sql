-- The gate of a resolved workflow version (021_run_gate.sql): its flow (null: none) and
-- whether it is paused and hooked. ?1 tenant, ?2 name, ?3 version.
SELECT flow, paused, hooked FROM workflows WHERE tenant_id = ?1 AND name = ?2 AND version = ?3
