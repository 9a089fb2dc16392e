-- $1 tenant, $2 id, $3 workflow, $4 version, $5 statuses, $6 start workflow, $7 start version, $8 url.
INSERT INTO hooks (tenant_id, id, source, workflow, version, statuses, start_workflow, start_version, url)
VALUES ($1, $2, 'module', $3, $4, $5, $6, $7, $8)
