-- Resumes the paused runs of a workflow (?3 '') or version whose pause was lifted, that no
-- other pause covers; runs still pausing have their ask withdrawn. ?1 tenant, ?2 workflow,
-- ?3 version or '', ?4 now.
UPDATE runs
SET status = CASE WHEN status <> 'paused' THEN status WHEN activations > 0 THEN 'running' ELSE 'pending' END,
    paused_at = NULL, updated_at = ?4
WHERE tenant_id = ?1 AND workflow = ?2 AND (?3 = '' OR version = ?3)
  AND (status = 'paused' OR status IN ('pending', 'running') AND paused_at IS NOT NULL)
  AND NOT EXISTS (SELECT 1 FROM workflow_pauses p
                  WHERE p.tenant_id = runs.tenant_id AND p.workflow = runs.workflow AND p.version IN ('', runs.version))
