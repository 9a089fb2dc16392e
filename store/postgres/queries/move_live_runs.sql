-- A hotfix: live runs of the rebound version replay against the new module now; runs stopped
-- as nondeterministic get another chance.
UPDATE runs
SET digest = $4,
    status = CASE WHEN status = 'nondeterministic' THEN 'running' ELSE status END,
    error = CASE WHEN status = 'nondeterministic' THEN NULL ELSE error END,
    available_at = now(),
    updated_at = now()
WHERE tenant_id = $1 AND workflow = $2 AND version = $3
  AND status IN ('pending', 'running', 'nondeterministic')
