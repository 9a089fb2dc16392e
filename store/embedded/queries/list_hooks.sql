SELECT tenant_id, id, source, workflow, version, statuses, coalesce(start_workflow, ''), coalesce(start_version, ''),
    coalesce(url, ''), created_at
FROM hooks WHERE tenant_id = ?1 ORDER BY id
