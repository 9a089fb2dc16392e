// Package postgres implements store.Store on PostgreSQL with pgx/v5.
//
// Tables live in one schema (Config.Schema), created and upgraded by Migrate from the numbered
// files in migrations/; every query is a file in queries/, embedded. A step commit is one
// statement (the fence, the journal row, and the lease's renewal once half of it has gone),
// group-committed with other activations' writes: one transaction and one round trip for all
// of them (groupcommit.go). Notices travel on LISTEN/NOTIFY channels named after the schema.
//
// Imports: store, abi, pgx and the standard library; never host or engine.
package postgres
