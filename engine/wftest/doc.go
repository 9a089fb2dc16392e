// Package wftest is the deterministic test harness behind `wfhost test`: it runs a workflow
// scenario (an input, events at virtual times, fake secrets, the end expected) on a fresh
// embedded store with a fake clock, so a 30-day sleep passes at once, and runs it again with
// a crash injected at every store write and with duplicated, early and late events; every
// variant must end as the first did. The same harness serves every guest language: it drives
// the engine, not an SDK.
//
// It may import the engine, host, store, store/embedded and internal packages; only cmd/
// imports it.
package wftest
