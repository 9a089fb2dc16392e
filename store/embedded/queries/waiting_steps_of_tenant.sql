-- The tenant's running runs' waiting steps on an event. ?1 tenant, ?2 event.
SELECT s.run_id, s.key, s.match
FROM steps s JOIN runs r ON r.id = s.run_id
WHERE s.tenant_id = ?1 AND s.status = 'waiting' AND s.event = ?2 AND r.status = 'running'
ORDER BY s.run_id, s.seq
