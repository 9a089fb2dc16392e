-- The upgrade gate's moves: each run $2[i] moves to version $5[i] of the module $6 when it is
-- still what the gate checked (open, on digest $3[i], with $4[i] journal entries) and no host
-- holds it (a holder may be journaling entries the gate never saw). Rows are locked in id
-- order, as move_live_runs.sql and Broadcast lock them; a claim skips a locked row, and the
-- lease test is evaluated again on the row as locked. A moved run keeps its status and wake
-- time (the gate showed its journal replays), except a nondeterministic one, which runs
-- again now; its snapshot, of the old code, is deleted. Returns the ids moved.
-- $1 tenant, $2 ids, $3 digests checked, $4 journal lengths checked, $5 versions, $6 digest.
WITH want AS (
    SELECT * FROM unnest($2::uuid[], $3::text[], $4::integer[], $5::text[]) AS w(id, from_digest, entries, version)
), moving AS (
    SELECT r.id, w.version FROM runs r JOIN want w ON w.id = r.id
    WHERE r.tenant_id = $1 AND r.digest = w.from_digest
      AND r.status IN ('pending', 'running', 'nondeterministic')
      AND r.lease_owner IS NULL
      AND (SELECT count(*) FROM steps s WHERE s.run_id = r.id) = w.entries
    ORDER BY r.id
    FOR UPDATE OF r
), moved AS (
    UPDATE runs r
    SET digest = $6,
        version = moving.version,
        status = CASE WHEN r.status = 'nondeterministic' THEN 'running' ELSE r.status END,
        error = CASE WHEN r.status = 'nondeterministic' THEN NULL ELSE r.error END,
        available_at = CASE WHEN r.status = 'nondeterministic' THEN now() ELSE r.available_at END,
        updated_at = now()
    FROM moving
    WHERE r.id = moving.id
    RETURNING r.id
), unsnapped AS (
    DELETE FROM snapshots USING moved WHERE snapshots.run_id = moved.id
)
SELECT id::text FROM moved
