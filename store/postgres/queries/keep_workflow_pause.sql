-- Keeps a workflow's (or version's) pause; a pause kept already stays as it was.
-- $1 tenant, $2 workflow, $3 version or ''.
INSERT INTO workflow_pauses (tenant_id, workflow, version) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING
