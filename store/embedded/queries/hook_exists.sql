SELECT EXISTS (SELECT 1 FROM hooks WHERE tenant_id = ?1 AND id = ?2)
