-- A run's tenant needs no foreign key: tenants are never deleted, and a run is only created for
-- a workflow the tenant has bound (workflows -> modules -> tenants are still checked). The key
-- cost every run insert a FOR KEY SHARE lock on its tenant's row, the one row all of a tenant's
-- concurrent starts share, which Postgres turns into a new multixact per start: measured at a
-- third of the leased run insert.
ALTER TABLE runs DROP CONSTRAINT runs_tenant_id_fkey;
