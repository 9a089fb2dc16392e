-- Whether a claim could take run ?1 now (ResumeRun): live and due, no lease on it, and its
-- tenant under its concurrency cap (its limits' "concurrency", else ?3; 0: none), as
-- claim_tenants and claim_candidates decide. ?2 now, ?3 default cap.
SELECT count(*) FROM runs r JOIN tenants t ON t.id = r.tenant_id
WHERE r.id = ?1 AND r.status IN ('pending', 'running') AND r.available_at <= ?2
  AND r.lease_owner IS NULL
  AND (coalesce(nullif(json_extract(t.limits, '$.concurrency'), 0), ?3) <= 0 OR (
      SELECT count(*) FROM runs h
      WHERE h.tenant_id = r.tenant_id AND h.lease_owner IS NOT NULL AND h.lease_expires_at > ?2
  ) < coalesce(nullif(json_extract(t.limits, '$.concurrency'), 0), ?3))
