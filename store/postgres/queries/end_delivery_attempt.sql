-- Records one attempt's outcome if its dispatcher still holds the delivery for it.
-- $1 id, $2 owner, $3 attempt, $4 the attempt (jsonb), $5 delivered, $6 retry at (null: failed).
UPDATE hook_deliveries
SET attempt_log = attempt_log || jsonb_build_array($4::jsonb),
    status = CASE WHEN $5 THEN 'delivered' WHEN $6::timestamptz IS NULL THEN 'failed' ELSE 'pending' END,
    next_at = CASE WHEN $5 OR $6::timestamptz IS NULL THEN NULL ELSE $6::timestamptz END,
    last_error = CASE WHEN $5 THEN NULL ELSE nullif($4::jsonb->>'error', '') END,
    lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND status = 'pending'
