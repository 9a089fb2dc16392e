// Package embedded implements store.Store on SQLite in one data directory, for a daemon that
// needs nothing else installed: `wfhost run` with no database URL.
//
// It is pure Go (modernc.org/sqlite, no cgo). The database is in WAL mode with
// synchronous=FULL, so an acknowledged write survives a crash of the process and of the
// machine; concurrent writers are group-committed by one writer goroutine (writer.go), so
// the fsync is shared. The semantics are store/postgres's, proven by the same conformance
// suite (store/storetest): leases fenced by epoch, available_at timers, idempotent starts,
// buffered events matched by JSON containment (jsonmatch.go implements Postgres's jsonb @>),
// tenancy on every query. The store is single-process: an exclusive lock on a file in the
// directory keeps a second daemon out, and notices travel in process (notices.go).
//
// SQL lives in queries/ and numbered migrations/, embedded.
//
// Its clock is injected (Config.Clock, internal/clock): one process holds the store, so its
// clock is the only one that says when a run is due or a lease has run out, and a test can
// move it instead of sleeping.
//
// Imports: store, its helpers in store/internal, abi, internal/clock, modernc.org/sqlite and
// the standard library; never host or engine.
package embedded
