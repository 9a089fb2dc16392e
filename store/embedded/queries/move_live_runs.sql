-- A hotfix: live runs of the rebound version replay against the new module now; runs stopped
-- as nondeterministic get another chance; a run waiting for a flow control slot (flow_key,
-- never activated, no available_at) keeps waiting. ?1 tenant, ?2 workflow, ?3 version, ?4 digest, ?5 now.
UPDATE runs
SET digest = ?4,
    status = CASE WHEN status = 'nondeterministic' THEN 'running' ELSE status END,
    error = CASE WHEN status = 'nondeterministic' THEN NULL ELSE error END,
    available_at = CASE WHEN flow_key IS NOT NULL AND status = 'pending' AND activations = 0 AND available_at IS NULL
                        THEN NULL ELSE ?5 END,
    updated_at = ?5
WHERE tenant_id = ?1 AND workflow = ?2 AND version = ?3 AND digest <> ?4
  AND status IN ('pending', 'running', 'nondeterministic')
