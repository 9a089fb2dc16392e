// Package host is the sandbox: it validates and compiles workflow modules (once per digest:
// a bounded structural pre-check of its own before wazero reads a byte, then a compile in a
// resource-limited worker process that fills the compilation cache, no lock held across it),
// and runs activations, each on an instance in its
// post-initialisation state (fresh, or reused and reset) with a memory limit, a wall-time
// deadline and WithCloseOnContextDone, exposing the wfhost host functions of ABI v1
// (abi/ABI.md) and a clock and random source that are deterministic outside step callbacks.
// Modules built with an Extism PDK come in through a second door, extism/go-sdk, with the same
// verbs as Extism host functions (ABI.md §9).
//
// What the host functions mean for a run (journal, commits, suspension) is the Handler's
// business; the engine implements it. A Handler whose call suspends the run may keep the
// guest blocked in that call instead of unwinding it (Park, park.go): the wall time stops and
// the tenant's core share forgets the pass meanwhile. A module transformed at load with
// asyncify (snapshots.go, Config.Snapshots) can be checkpointed at a step_run for a Handler
// that asks (Checkpointer) and an activation can start from such a Checkpoint. Imports: abi,
// host/snapshot (asyncify and images), internal/defaults (the value of a zero limit), wazero,
// extism/go-sdk and the standard library; never store or engine. RATIONALE.md records the
// decisions that shaped it.
package host
