// Package snapshot is a prototype of durable snapshots of a suspended guest (issue 13, point 2):
// a module is transformed at upload with binaryen's asyncify (Transform), so that a host call
// that suspends the run can unwind the guest's wasm call stack into a buffer in its own linear
// memory instead of aborting it; the host then copies linear memory and mutable globals (an
// Image, which holds the call stack too) and can later write them into a fresh instance and
// rewind it into the same host call, which returns its reply as if nothing had happened.
//
// Nothing uses it yet: neither the host's activations (host.Runtime) nor the engine call it,
// and the wfhost host functions here are only its tests' fakes. RATIONALE.md records what was
// measured and what wiring it into the engine would take.
//
// Imports: abi, wazero and the standard library. It runs binaryen's wasm-opt as a program
// (Debian's binaryen package); it never imports host, engine or store.
package snapshot
