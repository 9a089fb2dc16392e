-- Resumes a paused run, or withdraws the pause asked of a running one, in one statement, and
-- wakes the hosts: a paused run is pending again when it never ran, else running, claimable at
-- its available_at as it stood. With a version ($3 not ''), the run also moves to it ($3,
-- digest $4) if it is still on $5 with $6 journal entries; its snapshot goes (of the old
-- code). No row: the run is unknown, neither paused nor pausing, covered by a workflow pause,
-- or not what the caller checked (the caller looks which).
-- $1 tenant, $2 run, $3 version or '', $4 digest, $5 checked digest, $6 checked entries,
-- $7 wake channel.
WITH resumed AS (
    UPDATE runs r
    SET status = CASE WHEN r.status <> 'paused' THEN r.status WHEN r.activations > 0 THEN 'running' ELSE 'pending' END,
        paused_at = NULL,
        version = CASE WHEN $3 = '' THEN r.version ELSE $3 END,
        digest = CASE WHEN $3 = '' THEN r.digest ELSE $4 END,
        updated_at = now()
    WHERE r.tenant_id = $1 AND r.id = $2
      AND (r.status = 'paused' OR r.status IN ('pending', 'running') AND r.paused_at IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM workflow_pauses p
                      WHERE p.tenant_id = r.tenant_id AND p.workflow = r.workflow AND p.version IN ('', r.version))
      AND ($3 = '' OR r.digest = $5 AND (SELECT count(*) FROM steps s WHERE s.run_id = r.id) = $6)
    RETURNING pg_notify($7, current_setting('application_name')) AS woken, r.id, tenant_id, workflow, version, digest, status, input, output, error,
        coalesce(idempotency_key, '') AS idempotency_key, retention_days, activations, available_at, created_at, started_at,
        completed_at, updated_at, deadline, coalesce(continued_from::text, '') AS continued_from,
        coalesce(continued_as::text, '') AS continued_as, attempt, retry, cancel_requested_at, cancel_grace_until,
        coalesce(restarted_from::text, '') AS restarted_from, paused_at
), unsnapped AS (
    DELETE FROM snapshots USING resumed WHERE $3 <> '' AND snapshots.run_id = resumed.id
)
SELECT * FROM resumed
