INSERT INTO modules (tenant_id, digest, bytes, size, abi_version, created_at)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (tenant_id, digest) DO NOTHING
