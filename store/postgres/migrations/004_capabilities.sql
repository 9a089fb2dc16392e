-- Capabilities: tenant secrets and the outbound HTTP audit trail.

-- A secret's value is readable only by a step callback of its tenant (secret_get); the API
-- lists names and times, never values.
CREATE TABLE secrets (
    tenant_id  text NOT NULL REFERENCES tenants (id),
    name       text NOT NULL,
    value      bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, name)
);

-- Every outbound request a step made or tried, without bodies, header values or query
-- strings. Rows go with their run when retention sweeps it.
CREATE TABLE outbound (
    id          bigserial PRIMARY KEY,
    tenant_id   text NOT NULL,
    run_id      uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step        text NOT NULL,
    method      text NOT NULL,
    host        text NOT NULL,
    path        text NOT NULL,
    status      integer NOT NULL,
    error       text NOT NULL DEFAULT '',
    bytes_out   integer NOT NULL,
    bytes_in    integer NOT NULL,
    duration_ms double precision NOT NULL,
    at          timestamptz NOT NULL
);
CREATE INDEX outbound_by_run ON outbound (run_id, id);
