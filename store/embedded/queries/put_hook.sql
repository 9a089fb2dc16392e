-- Creates or replaces a tenant hook; a module's hook of the same id is left alone (no row).
-- ?1 tenant, ?2 id, ?3 workflow, ?4 version, ?5 statuses (JSON), ?6 start workflow, ?7 start version, ?8 url, ?9 now.
INSERT INTO hooks (tenant_id, id, source, workflow, version, statuses, start_workflow, start_version, url, created_at)
SELECT id, ?2, 'tenant', ?3, ?4, ?5, ?6, ?7, ?8, ?9 FROM tenants WHERE id = ?1
ON CONFLICT (tenant_id, id) DO UPDATE
SET workflow = excluded.workflow, version = excluded.version, statuses = excluded.statuses,
    start_workflow = excluded.start_workflow, start_version = excluded.start_version, url = excluded.url,
    created_at = excluded.created_at
WHERE hooks.source = 'tenant'
RETURNING tenant_id, id, source, workflow, version, statuses, coalesce(start_workflow, ''), coalesce(start_version, ''),
    coalesce(url, ''), created_at
