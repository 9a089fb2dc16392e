-- Keeps a workflow's (or version's) pause. ?1 tenant, ?2 workflow, ?3 version or '', ?4 now.
INSERT INTO workflow_pauses (tenant_id, workflow, version, paused_at) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT DO NOTHING
