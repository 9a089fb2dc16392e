INSERT INTO modules (tenant_id, digest, bytes, size, abi_version)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (tenant_id, digest) DO NOTHING
