// Package logdetail reads the detail object of a lifecycle log entry (store.LogEntry) as both
// stores write it. Their triggers put times in it in the database's own form (Postgres its
// timestamp text, SQLite microseconds since the epoch); a reader gets one form from either
// store. It imports only the standard library.
package logdetail
