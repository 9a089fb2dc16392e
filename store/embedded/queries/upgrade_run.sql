-- One of the upgrade gate's moves (store/postgres's upgrade_runs.sql): the run ?2 moves to
-- version ?5 of module ?6 when it is still what the gate checked (open, on digest ?3, with ?4
-- journal entries) and no host holds it. ?1 tenant, ?7 now.
UPDATE runs
SET digest = ?6,
    version = ?5,
    status = CASE WHEN status = 'nondeterministic' THEN 'running' ELSE status END,
    error = CASE WHEN status = 'nondeterministic' THEN NULL ELSE error END,
    available_at = CASE WHEN status = 'nondeterministic' THEN ?7 ELSE available_at END,
    updated_at = ?7
WHERE id = ?2 AND tenant_id = ?1 AND digest = ?3
  AND status IN ('pending', 'running', 'nondeterministic')
  AND lease_owner IS NULL
  AND (SELECT count(*) FROM steps WHERE steps.run_id = runs.id) = ?4
