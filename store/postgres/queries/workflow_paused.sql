-- Whether a workflow version is paused, itself or with its whole workflow. $1 tenant,
-- $2 workflow, $3 version.
SELECT EXISTS (SELECT 1 FROM workflow_pauses WHERE tenant_id = $1 AND workflow = $2 AND version IN ('', $3))
