-- One tenant's oldest runnable runs. ?1 tenant, ?2 now, ?3 how many.
SELECT id, available_at FROM runs
WHERE tenant_id = ?1 AND status IN ('pending', 'running') AND available_at <= ?2
  AND (lease_expires_at IS NULL OR lease_expires_at < ?2)
ORDER BY available_at
LIMIT ?3
