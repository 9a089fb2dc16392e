-- The outbox by tenant, as store/postgres's pending_deliveries.sql.
SELECT tenant_id, count(*), min(max(next_at, coalesce(lease_expires_at, next_at)))
FROM hook_deliveries WHERE status = 'pending'
GROUP BY tenant_id ORDER BY tenant_id
