SELECT digest FROM workflows WHERE tenant_id = ? AND name = ? AND version = ?
