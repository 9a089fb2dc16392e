SELECT tenant_id, digest, size, abi_version, created_at, NULL::bytea
FROM modules WHERE tenant_id = $1 ORDER BY created_at DESC, digest
