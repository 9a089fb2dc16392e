-- The outbox by tenant: pending webhook deliveries and the earliest time one is due (its next
-- attempt, or its lease's end while a dispatcher holds it). Reads the pending rows only,
-- through hook_deliveries_due, never the delivered and failed ones the table keeps.
SELECT tenant_id, count(*), min(greatest(next_at, coalesce(lease_expires_at, next_at)))
FROM hook_deliveries WHERE status = 'pending'
GROUP BY tenant_id ORDER BY tenant_id
