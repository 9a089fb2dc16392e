-- ?1 id, ?2 owner, ?3 attempt, ?4 the attempt (JSON), ?5 delivered, ?6 retry at (null: failed), ?7 now.
UPDATE hook_deliveries
SET attempt_log = json_insert(attempt_log, '$[#]', json(?4)),
    status = CASE WHEN ?5 THEN 'delivered' WHEN ?6 IS NULL THEN 'failed' ELSE 'pending' END,
    next_at = CASE WHEN ?5 OR ?6 IS NULL THEN NULL ELSE ?6 END,
    last_error = CASE WHEN ?5 THEN NULL ELSE nullif(json_extract(?4, '$.error'), '') END,
    lease_owner = NULL, lease_expires_at = NULL, updated_at = ?7
WHERE id = ?1 AND lease_owner = ?2 AND attempts = ?3 AND status = 'pending'
