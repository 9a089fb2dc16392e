SELECT tenant_id, digest, size, abi_version, created_at, NULL
FROM modules WHERE tenant_id = ? ORDER BY created_at DESC, digest
