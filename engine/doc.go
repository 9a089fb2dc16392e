// Package engine executes workflow runs: it claims runnable runs from the store under a fenced
// lease, runs one activation (a pass of the guest over the run's journal) per claim on the host
// runtime, commits every new durable boundary before anything can depend on it (a step's
// result at the guest's next durable call, or with the run's end: ABI.md §4.5), and suspends,
// completes, fails or releases the run when the pass ends. It also serves the requests the API
// makes (deploy, start, signal, broadcast, cancel, reads).
//
// Imports: abi, host, store, internal/envelope (secrets at rest), internal/defaults (the value
// of every setting left zero) and the standard library; never store implementations, api or
// cmd.
// RATIONALE.md records the decisions that shaped it.
package engine
