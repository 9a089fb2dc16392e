-- Tenancy: tokens (hashes only), per-tenant limits, retention expiry and idempotent events.

-- limits holds the tenant's overrides of the operator's defaults, by the JSON names of
-- store.Limits; a missing key means "the default".
ALTER TABLE tenants ADD COLUMN limits jsonb NOT NULL DEFAULT '{}';

-- A token is stored as the SHA-256 of its secret: a stolen database does not hand out access.
CREATE TABLE tokens (
    id         text PRIMARY KEY,
    tenant_id  text NOT NULL REFERENCES tenants (id),
    name       text NOT NULL DEFAULT '',
    hash       bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
CREATE INDEX tokens_by_tenant ON tokens (tenant_id, created_at);

-- expires_at is set when a run becomes terminal (completed_at + its retention days), so the
-- sweeper walks one small index in expiry order instead of computing every terminal run's
-- expiry. Live and nondeterministic runs have none and are never swept.
ALTER TABLE runs ADD COLUMN expires_at timestamptz;
CREATE INDEX runs_expiry ON runs (expires_at) WHERE expires_at IS NOT NULL;
UPDATE runs SET expires_at = completed_at + retention_days * interval '1 day'
WHERE status IN ('completed', 'failed', 'cancelled');

-- Held runs per tenant, for the per-tenant concurrency cap of claims. lease_owner changes only
-- when a run is claimed or let go, never on a lease renewal, so renewals stay heap-only.
CREATE INDEX runs_held ON runs (tenant_id) WHERE lease_owner IS NOT NULL;

-- An event sent with an id is taken once per tenant and name; a retry of the request finds it.
ALTER TABLE events ADD COLUMN event_key text;
CREATE UNIQUE INDEX events_key ON events (tenant_id, name, event_key) WHERE event_key IS NOT NULL;
