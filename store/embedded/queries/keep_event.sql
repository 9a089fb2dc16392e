-- Keeps an event: for one run (?2 set) until a wait consumes it, or a broadcast (?2 null).
-- ?1 tenant, ?2 run or null, ?3 name, ?4 payload, ?5 now, ?6 event key or null.
INSERT INTO events (tenant_id, run_id, name, payload, received_at, event_key)
VALUES (?1, ?2, ?3, ?4, ?5, ?6)
RETURNING id
