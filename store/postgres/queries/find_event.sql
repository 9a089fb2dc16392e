-- The oldest event a wait reached now may take: one sent to this run, or a broadcast received
-- since the run was created that this run has not consumed yet.
SELECT e.id, e.run_id IS NOT NULL, e.payload
FROM events e
WHERE e.tenant_id = $1 AND e.name = $2
  AND ($3::jsonb IS NULL OR e.payload @> $3::jsonb)
  AND (e.run_id = $4
       OR (e.run_id IS NULL AND e.received_at >= $5
           AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.run_id = $4 AND s.event_id = e.id)))
ORDER BY e.id
LIMIT 1
