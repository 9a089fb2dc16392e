-- Broadcast events are kept for a window (engine.Config.BroadcastWindow) and then pruned oldest
-- first across tenants: this index finds them without reading the events sent to one run.
CREATE INDEX events_broadcast_age ON events (received_at) WHERE run_id IS NULL;
