-- The tenant's broadcasts of this name received since the run was created that the run has
-- not consumed, oldest first. ?1 tenant, ?2 event, ?3 run created at, ?4 run.
SELECT e.id, e.payload FROM events e
WHERE e.run_id IS NULL AND e.tenant_id = ?1 AND e.name = ?2 AND e.received_at >= ?3
  AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.run_id = ?4 AND s.event_id = e.id)
ORDER BY e.id
