-- The initial schema. Tables live in the store's schema (search_path); every row carries the
-- tenant it belongs to, so a tenant is the shard key should one Postgres stop being enough.

CREATE TABLE tenants (
    id         text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE modules (
    tenant_id   text NOT NULL REFERENCES tenants (id),
    digest      text NOT NULL,
    bytes       bytea NOT NULL,
    size        integer NOT NULL,
    abi_version integer NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, digest)
);

-- bound_seq orders bindings: the latest version of a name is the one bound last.
CREATE SEQUENCE workflow_bound_seq;

CREATE TABLE workflows (
    tenant_id      text NOT NULL,
    name           text NOT NULL,
    version        text NOT NULL,
    digest         text NOT NULL,
    retention_days integer NOT NULL DEFAULT 0,
    retry          jsonb NOT NULL,
    triggers       text[] NOT NULL DEFAULT '{}',
    bound_seq      bigint NOT NULL DEFAULT nextval('workflow_bound_seq'),
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, name, version),
    FOREIGN KEY (tenant_id, digest) REFERENCES modules (tenant_id, digest)
);

CREATE TABLE runs (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id        text NOT NULL REFERENCES tenants (id),
    workflow         text NOT NULL,
    version          text NOT NULL,
    digest           text NOT NULL,
    status           text NOT NULL,
    input            jsonb NOT NULL,
    output           jsonb,
    error            jsonb,
    idempotency_key  text,
    retention_days   integer NOT NULL,
    activations      integer NOT NULL DEFAULT 0,
    available_at     timestamptz,
    lease_owner      text,
    lease_epoch      bigint NOT NULL DEFAULT 0,
    lease_expires_at timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    completed_at     timestamptz,
    updated_at       timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX runs_idempotency ON runs (tenant_id, workflow, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
-- The claim query's index: only live runs are in it, ordered by when they become runnable.
CREATE INDEX runs_claimable ON runs (available_at) WHERE status IN ('pending', 'running');
CREATE INDEX runs_by_workflow ON runs (tenant_id, workflow, created_at DESC, id DESC);
CREATE INDEX runs_by_tenant ON runs (tenant_id, created_at DESC, id DESC);

CREATE TABLE steps (
    run_id       uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    tenant_id    text NOT NULL,
    seq          integer NOT NULL,
    key          text NOT NULL,
    kind         text NOT NULL,
    status       text NOT NULL,
    output       jsonb,
    error        jsonb,
    attempt      integer NOT NULL DEFAULT 0,
    wake_at      timestamptz,
    event        text,
    match        jsonb,
    event_id     bigint,
    started_at   timestamptz NOT NULL,
    completed_at timestamptz,
    PRIMARY KEY (run_id, key),
    UNIQUE (run_id, seq)
);

-- Broadcasts find the runs waiting on an event name through this index, then test the match.
CREATE INDEX steps_waiting ON steps (tenant_id, event) WHERE status = 'waiting';

-- Events sent to one run (run_id set) wait here until a wait consumes them; broadcasts
-- (run_id null) stay for a bounded window so waits reached later still see them.
CREATE TABLE events (
    id          bigserial PRIMARY KEY,
    tenant_id   text NOT NULL,
    run_id      uuid REFERENCES runs (id) ON DELETE CASCADE,
    name        text NOT NULL,
    payload     jsonb NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX events_for_run ON events (run_id, name, id) WHERE run_id IS NOT NULL;
CREATE INDEX events_broadcast ON events (tenant_id, name, received_at) WHERE run_id IS NULL;
CREATE INDEX events_payload ON events USING gin (payload jsonb_path_ops);
