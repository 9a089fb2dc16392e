-- The tenants with runnable runs, each with its concurrency cap (its limits' "concurrency",
-- else ?2; 0: none) and the runs it holds under an unexpired lease on any host. ?1 now, ?2 default cap.
SELECT t.id,
    coalesce(nullif(json_extract(t.limits, '$.concurrency'), 0), ?2) AS cap,
    (SELECT count(*) FROM runs h
     WHERE h.tenant_id = t.id AND h.lease_owner IS NOT NULL AND h.lease_expires_at > ?1) AS held
FROM tenants t
WHERE EXISTS (
    SELECT 1 FROM runs r
    WHERE r.tenant_id = t.id AND r.status IN ('pending', 'running') AND r.available_at <= ?1
      AND (r.lease_expires_at IS NULL OR r.lease_expires_at < ?1))
ORDER BY t.id
