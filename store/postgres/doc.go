// Package postgres implements store.Store on PostgreSQL with pgx/v5.
//
// Tables live in one schema (Config.Schema), created and upgraded by Migrate from the numbered
// files in migrations/; every query is a file in queries/, embedded. A step commit is one
// statement (the fence, the journal row, and the lease's renewal once half of it has gone),
// group-committed with other activations' writes: one transaction and one round trip for all
// of them (groupcommit.go). A snapshot's save, with the step it holds back, is one such statement
// too (save_snapshot.sql), and a claim loads each run's snapshot with its journal from the
// snapshot on in the one journal statement of the batch (load_journals.sql), at most a window of
// each (store.ClaimParams.JournalWindow; the rest read by JournalPage, journal_page.sql). Notices travel on LISTEN/NOTIFY channels named after the schema.
//
// Every exported method classifies its error once (errors.go): store.ErrUnavailable when the
// database cannot serve now (connection errors, shutdown and startup, a read-only standby, disk
// full, deadlocks and serialization failures), store.ErrRefused for a value it will never keep
// (SQLSTATE classes 22, 23, 54). Lock order: a group-commit batch locks its runs in id order and
// the lease heartbeat never waits for a lock (groupcommit.go, extend_leases.sql).
//
// The database's clock, not the daemon's, decides when a run is due and when a lease has run
// out: every such comparison is against now() in SQL (claim_runs.sql, next_wakeup.sql,
// extend_leases.sql, ...). That is on purpose: several daemons share one database, and their
// clocks drift apart, but they must agree on who holds a lease and when a sleep is over, so
// the one clock they all see is the database's. The engine's injected clock (engine
// Config.Clock) still stamps what the engine writes (step starts, due times it computes), so a
// test that moves a fake clock moves those, not Postgres's; tests that need a due time to pass
// without waiting use the embedded store, whose clock is injected.
//
// Imports: store, abi, pgx and the standard library; never host or engine.
package postgres
