-- Creates the store's schema and the table that records applied migrations. {schema} is
-- replaced with the validated, quoted schema name: DDL takes no parameters.
CREATE SCHEMA IF NOT EXISTS {schema};
CREATE TABLE IF NOT EXISTS {schema}.migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
