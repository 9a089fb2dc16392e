-- Revoking twice keeps the first revocation's time. ?1 tenant, ?2 token id, ?3 now.
UPDATE tokens SET revoked_at = coalesce(revoked_at, ?3)
WHERE tenant_id = ?1 AND id = ?2
RETURNING id, tenant_id, name, created_at, revoked_at
