-- The module a workflow version is bound to, for the message of a refused deploy.
SELECT digest FROM workflows WHERE tenant_id = $1 AND name = $2 AND version = $3
