SELECT tenant_id, digest, size, abi_version, created_at, bytes
FROM modules WHERE tenant_id = ? AND digest = ?
