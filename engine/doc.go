// Package engine executes workflow runs: it claims runnable runs from the store under a fenced
// lease, runs one activation (a pass of the guest over the run's journal) per claim on the host
// runtime, commits every new durable boundary before anything can depend on it (a step's
// result at the guest's next durable call, or with the run's end: ABI.md §4.5), and suspends,
// completes, fails or releases the run when the pass ends. It also serves the requests the API
// makes (deploy, start, signal, broadcast, cancel, schedules, tenants, tokens, secrets), and
// fires schedules.
//
// Two types divide the work, and New builds both as one Engine:
//   - Executor (executor.go, activate.go, pass.go, journal.go, parking.go, snapshots.go,
//     handback.go, sweeper.go, schedules.go): the background loops (claimer, notice listener,
//     lease heartbeat, retention sweeper, scheduler, hand-back retrier), all under one
//     internal/lifecycle Group
//     from Start to Stop, and the activations they run. A pass (the guest's host calls) writes
//     through its journal, which owns every fenced write of the activation, held step and
//     snapshot included. A pass whose run suspends can stay parked, its guest blocked in the
//     host call, until its run is resumed by id with no replay (parking.go); a run claimed
//     anew starts from its latest durable snapshot when it has one, replaying only the journal
//     after it (snapshots.go).
//   - Service (service*.go, clientinput.go, tokens.go): what a client sent, checked, limited and
//     written; the tokens it authenticated are kept for a few seconds (tokens.go).
//     Reads that need nothing of the engine are the store's own; the engine does not forward
//     them.
//
// Apart from both, DryReplay (replay.go) runs a pass over a journal it is given, with no
// store and no lease: journaled steps return their results, nothing executes or commits, and it
// reports whether the module is compatible with the journal, by the same step rules as a pass
// (wfhost replay). The upgrade gate (upgrade.go) runs it over every open run of a deploy's
// workflows and moves the runs that pass, pins the rest, or refuses the deploy, by policy. A
// query (query.go, Service.QueryRun) is the same dry pass over a live run's journal whose
// frontier answers the query with the workflow's handler instead of stopping.
//
// They share the settings, the observer (observer.go: every metric and span, made at named
// events) and two caches (modules, tenant limits); the Service hands a run it starts to the
// Executor when this host can run it at once.
//
// Imports: abi, host, store, internal/envelope (secrets at rest), internal/defaults (the value
// of every setting left zero), internal/lifecycle (the loops' start and stop), internal/clock
// (the injected time and jitter: Config.Clock, Config.Rand), github.com/robfig/cron/v3 (cron
// expressions of schedules) and the standard library; never
// store implementations, api or cmd.
// RATIONALE.md records the decisions that shaped it.
package engine
