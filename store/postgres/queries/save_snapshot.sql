-- SaveSnapshot: fence the lease as commit_step.sql does (a share lock, the lease renewed once
-- half of it has gone), journal the held step when there is one ($8), and replace the run's
-- snapshot, in one statement: one round trip, one transaction, and in the group commit like
-- every fenced write. A stale lease matches no run row, and then neither the step nor the
-- snapshot is written. A held step is journal progress and clears the fault count; a snapshot
-- alone is not (an activation that faults after each restore must still reach the bound).
-- $1 run, $2 epoch, $3 lease ms, $4 snapshot seq, $5 last key, $6 code, $7 data,
-- $8 whether a held step comes, $9.. the held step (stepArgs; nulls without one).
WITH fence AS (
    SELECT id, tenant_id, lease_expires_at < now() + $3 * interval '0.5 millisecond' AS renew, faults > 0 AS faulted
    FROM runs
    WHERE id = $1 AND lease_epoch = $2 AND status = 'running'
    FOR SHARE
), renewed AS (
    UPDATE runs SET lease_expires_at = now() + $3 * interval '1 millisecond', updated_at = now(),
        faults = CASE WHEN $8 THEN 0 ELSE runs.faults END,
        last_fault = CASE WHEN $8 THEN NULL ELSE runs.last_fault END
    FROM fence
    WHERE runs.id = fence.id AND (fence.renew OR (fence.faulted AND $8))
), held AS (
    INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at)
    SELECT fence.id, fence.tenant_id, $9, $10, $11, $12, $13, $14, $15, $16, nullif($17, ''), $18, $19, $20, $21 FROM fence
    WHERE $8
    ON CONFLICT (run_id, key) DO UPDATE
    SET status = EXCLUDED.status, output = EXCLUDED.output, error = EXCLUDED.error,
        attempt = EXCLUDED.attempt, wake_at = EXCLUDED.wake_at, event_id = EXCLUDED.event_id,
        completed_at = EXCLUDED.completed_at
)
INSERT INTO snapshots (run_id, tenant_id, seq, last_key, code, data, created_at)
SELECT fence.id, fence.tenant_id, $4, $5, $6, $7, now() FROM fence
ON CONFLICT (run_id) DO UPDATE
SET seq = EXCLUDED.seq, last_key = EXCLUDED.last_key, code = EXCLUDED.code, data = EXCLUDED.data,
    created_at = EXCLUDED.created_at
RETURNING run_id
