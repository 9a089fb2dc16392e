// Package postgres implements store.Store on PostgreSQL with pgx/v5.
//
// Tables live in one schema (Config.Schema), created and upgraded by Migrate from the numbered
// files in migrations/; every query is a file in queries/, embedded. A step commit is one
// statement (the fence, the journal row, and the lease's renewal once half of it has gone),
// group-committed with other activations' writes: one transaction and one round trip for all
// of them (groupcommit.go). Notices travel on LISTEN/NOTIFY channels named after the schema.
//
// Every exported method classifies its error once (errors.go): store.ErrUnavailable when the
// database cannot serve now (connection errors, shutdown and startup, a read-only standby, disk
// full, deadlocks and serialization failures), store.ErrRefused for a value it will never keep
// (SQLSTATE classes 22, 23, 54). Lock order: a group-commit batch locks its runs in id order and
// the lease heartbeat never waits for a lock (groupcommit.go, extend_leases.sql).
//
// Imports: store, abi, pgx and the standard library; never host or engine.
package postgres
