-- The step commit: fence the lease and write the journal row, in one statement and so one
-- transaction and one round trip. A stale lease matches no run row, and then no step row is
-- written either. The fence is a share lock, not an update: a claim that would take the run
-- (an update) and a signal (FOR UPDATE in fence_lock.sql) wait for this commit, and the run
-- row gets no new version, and its indexes no new entries, per step. The lease is renewed only
-- once half of it has gone (the heartbeat renews it too), so most steps write nothing to runs.
-- A commit is journal progress: it also clears the run's fault count, when it has one.
WITH fence AS (
    SELECT id, tenant_id, lease_expires_at < now() + $3 * interval '0.5 millisecond' AS renew, faults > 0 AS faulted
    FROM runs
    WHERE id = $1 AND lease_epoch = $2 AND status = 'running'
    FOR SHARE
), renewed AS (
    UPDATE runs SET lease_expires_at = now() + $3 * interval '1 millisecond', updated_at = now(),
        faults = 0, last_fault = NULL
    FROM fence
    WHERE runs.id = fence.id AND (fence.renew OR fence.faulted)
)
INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at)
SELECT fence.id, fence.tenant_id, $4, $5, $6, $7, $8, $9, $10, $11, nullif($12, ''), $13, $14, $15, $16 FROM fence
ON CONFLICT (run_id, key) DO UPDATE
SET status = EXCLUDED.status, output = EXCLUDED.output, error = EXCLUDED.error,
    attempt = EXCLUDED.attempt, wake_at = EXCLUDED.wake_at, event_id = EXCLUDED.event_id,
    completed_at = EXCLUDED.completed_at
RETURNING run_id
