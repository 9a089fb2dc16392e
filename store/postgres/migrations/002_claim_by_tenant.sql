-- Claims and wake-up queries walk the runnable runs tenant by tenant, so one tenant's backlog
-- neither delays another tenant's new run nor makes the queries scan it. This index replaces
-- the global one; available_at and status are its only changing columns, so lease renewals
-- (every step commit) stay heap-only updates.
CREATE INDEX runs_ready ON runs (tenant_id, available_at) WHERE status IN ('pending', 'running');
DROP INDEX runs_claimable;
