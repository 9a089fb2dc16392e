-- ForkBranches: makes run $1 branch $4 of the parallel step $3 (seq $5) of run $2, in one
-- statement: linked as the parent's child (parent key $6), its place in the fork, its journal
-- the parent's entries before the step and the branch's entry at it (started $7), and, unless
-- $8 (live), held: not claimable (available_at null, as a suspended run's) until released.
-- It is a child (runs.is_child), whose end alone fires the end triggers (020, 023).
-- Its activations start at 1: a claim reads the journal of a run past its first activation
-- only, and a branch has one from the start.
WITH link AS (
    INSERT INTO run_parents (run_id, parent_run_id, parent_key, parent_close, awaited)
    VALUES ($1, $2, $6, 'cancel', true)
), place AS (
    INSERT INTO run_branches (run_id, parent_run_id, fork_key, branch, status)
    VALUES ($1, $2, $3, $4, CASE WHEN $8 THEN 'live' ELSE 'held' END)
), journal AS (
    INSERT INTO steps (run_id, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at)
    SELECT $1, tenant_id, seq, key, kind, status, output, error, attempt, wake_at, event, match, event_id, started_at, completed_at
    FROM steps WHERE run_id = $2 AND seq < $5
    UNION ALL
    SELECT $1, tenant_id, $5, $3, 'branch', 'completed', jsonb_build_object('branch', $4::integer), NULL, 0, NULL, NULL, NULL, NULL, $7, $7
    FROM runs WHERE id = $2
), hold AS (
    UPDATE runs SET activations = 1, available_at = CASE WHEN $8 THEN available_at END, is_child = true WHERE id = $1
)
SELECT 1
