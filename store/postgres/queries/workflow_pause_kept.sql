-- Whether this very pause, of a workflow ($3 '') or a version, is still kept: a pause's second
-- pass (021_pause.sql), run under pause_workflow_lock.sql, is left out when a resume lifted it
-- in between. $1 tenant, $2 workflow, $3 version or ''.
SELECT EXISTS (SELECT 1 FROM workflow_pauses WHERE tenant_id = $1 AND workflow = $2 AND version = $3)
