-- A hotfix: live runs of the rebound version replay against the new module now; runs stopped
-- as nondeterministic get another chance. ?1 tenant, ?2 workflow, ?3 version, ?4 digest, ?5 now.
UPDATE runs
SET digest = ?4,
    status = CASE WHEN status = 'nondeterministic' THEN 'running' ELSE status END,
    error = CASE WHEN status = 'nondeterministic' THEN NULL ELSE error END,
    available_at = ?5,
    updated_at = ?5
WHERE tenant_id = ?1 AND workflow = ?2 AND version = ?3 AND digest <> ?4
  AND status IN ('pending', 'running', 'nondeterministic')
