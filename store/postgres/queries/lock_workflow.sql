-- The binding of one workflow version, locked so concurrent deploys of it serialize.
SELECT digest FROM workflows WHERE tenant_id = $1 AND name = $2 AND version = $3 FOR UPDATE
