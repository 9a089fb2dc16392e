SELECT 1 FROM events WHERE tenant_id = ? AND name = ? AND event_key = ?
