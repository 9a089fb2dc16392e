// Package postgres implements store.Store on PostgreSQL with pgx/v5.
//
// Tables live in one schema (Config.Schema), created and upgraded by Migrate from the numbered
// files in migrations/; every query is a file in queries/, embedded. A step commit is one
// statement (fence, lease renewal and journal row together), so one transaction and one round
// trip. Notices travel on LISTEN/NOTIFY channels named after the schema.
//
// Imports: store, abi, pgx and the standard library; never host or engine.
package postgres
