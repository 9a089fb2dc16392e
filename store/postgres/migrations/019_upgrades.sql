-- The upgrade gate's reports (issue 15): one row per gated deploy, the engine's JSON report as
-- given (json, not jsonb: it is read back whole, in the order it was written).
CREATE TABLE upgrades (
    tenant_id  text NOT NULL REFERENCES tenants (id),
    id         uuid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    report     json NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
