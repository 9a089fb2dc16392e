// Package snapshot is a prototype of durable snapshots of a suspended guest (issue 13, point 2):
// a module is transformed at upload with binaryen's asyncify (Transform), so that a host call
// that suspends the run can unwind the guest's wasm call stack into a buffer in its own linear
// memory instead of aborting it; the host then copies linear memory and mutable globals (an
// Image, which holds the call stack too) and can later write them into a fresh instance and
// rewind it into the same host call, which returns its reply as if nothing had happened.
//
// The host (host/snapshots.go) uses it for durable snapshots: it runs Asyncify at a module's
// load and drives a Guest per instance; the engine (engine/snapshots.go) stores the images.
// This package's own tests drive it with fake host functions, and RATIONALE.md records what
// was measured before it was wired in.
//
// Imports: abi, wazero and the standard library. It runs binaryen's wasm-opt as a program
// (Debian's binaryen package); it never imports host, engine or store.
package snapshot
