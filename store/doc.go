// Package store defines wfhost's persistence seam: the Store interface, the records it keeps
// (modules, workflows, runs, journal steps, events, schedules) and the sentinel errors callers
// test with errors.Is.
//
// Implementations live in subpackages (store/postgres, and store/embedded on SQLite) and must
// all pass the conformance suite in store/storetest. This package imports only abi and the standard
// library; it never imports host or engine.
package store
