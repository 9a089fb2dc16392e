-- The hooks of an ended run: its tenant's, for its workflow (or every one) and version.
-- ?1 tenant, ?2 workflow, ?3 version.
SELECT id, statuses, coalesce(start_workflow, ''), coalesce(start_version, ''), coalesce(url, '')
FROM hooks
WHERE tenant_id = ?1 AND workflow IN ('', ?2) AND version IN ('', ?3)
ORDER BY id
