// Package sqlfiles reads the SQL a store embeds: its named queries (one .sql file each) and
// its numbered migrations. Both stores (store/postgres, store/embedded) keep their SQL in
// files (STYLE.md) and read them the same way; applying a migration stays each store's own
// business. It imports only the standard library.
package sqlfiles
