DELETE FROM hooks WHERE tenant_id = $1 AND id = $2 AND source = 'tenant'
