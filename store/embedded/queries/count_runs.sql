SELECT workflow, status, count(*) FROM runs WHERE tenant_id = ? GROUP BY workflow, status
