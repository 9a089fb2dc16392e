-- Creates or replaces a tenant hook. No row: the tenant does not exist, or the id names a
-- module's hook (which only a deploy replaces). created: no row had the id before.
-- $1 tenant, $2 id, $3 workflow, $4 version, $5 statuses, $6 start workflow, $7 start version, $8 url.
INSERT INTO hooks (tenant_id, id, source, workflow, version, statuses, start_workflow, start_version, url)
SELECT id, $2::text, 'tenant', $3::text, $4::text, $5::text[], $6::text, $7::text, $8::text
FROM tenants WHERE id = $1
ON CONFLICT (tenant_id, id) DO UPDATE
SET workflow = EXCLUDED.workflow, version = EXCLUDED.version, statuses = EXCLUDED.statuses,
    start_workflow = EXCLUDED.start_workflow, start_version = EXCLUDED.start_version, url = EXCLUDED.url,
    created_at = now()
WHERE hooks.source = 'tenant'
RETURNING tenant_id, id, source, workflow, version, statuses, coalesce(start_workflow, ''), coalesce(start_version, ''),
    coalesce(url, ''), created_at, (xmax = 0) AS created
