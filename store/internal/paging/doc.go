// Package paging is how both stores page ListRuns: the page size a filter asks for, clamped,
// and the opaque cursor that names the last run of a page (its creation time and id). It
// imports only store and the standard library.
package paging
