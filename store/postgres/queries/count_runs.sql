SELECT workflow, status, count(*) FROM runs WHERE tenant_id = $1 GROUP BY workflow, status
