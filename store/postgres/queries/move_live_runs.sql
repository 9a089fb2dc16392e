-- A hotfix: live runs of the rebound version replay against the new module now, from the top
-- (their snapshots, of the old code, are deleted); runs stopped as nondeterministic get another
-- chance; a run waiting for a flow control slot (flow_key, never activated, no available_at)
-- keeps waiting. Rows are locked in id order, as Broadcast locks them, so the two cannot deadlock.
-- Returns how many runs moved.
-- $1 tenant, $2 workflow, $3 version, $4 the new digest.
WITH moving AS (
    SELECT id FROM runs
    WHERE tenant_id = $1 AND workflow = $2 AND version = $3 AND digest <> $4
      AND status IN ('pending', 'running', 'nondeterministic')
    ORDER BY id
    FOR UPDATE
), moved AS (
    UPDATE runs r
    SET digest = $4,
        status = CASE WHEN r.status = 'nondeterministic' THEN 'running' ELSE r.status END,
        error = CASE WHEN r.status = 'nondeterministic' THEN NULL ELSE r.error END,
        available_at = CASE WHEN r.flow_key IS NOT NULL AND r.status = 'pending' AND r.activations = 0 AND r.available_at IS NULL
                            THEN NULL ELSE now() END,
        updated_at = now()
    FROM moving
    WHERE r.id = moving.id
    RETURNING r.id
), unsnapped AS (
    -- A snapshot is of the old code: the moved runs replay from the top.
    DELETE FROM snapshots USING moved WHERE snapshots.run_id = moved.id
)
SELECT count(*) FROM moved
