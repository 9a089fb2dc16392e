-- A workflow version's module hooks, before its binding writes them again. $1 tenant, $2 workflow, $3 version.
DELETE FROM hooks WHERE tenant_id = $1 AND source = 'module' AND workflow = $2 AND version = $3
