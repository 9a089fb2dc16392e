-- The upgrade gate's reports, as store/postgres's 019_upgrades.sql.
CREATE TABLE upgrades (
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    id         TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    report     TEXT NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
