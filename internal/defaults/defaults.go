package defaults

import "time"

// A tenant's limits when neither the tenant nor the operator set them (store.Limits; the
// engine's Config.TenantDefaults; `wfhost run --memory-pages` and the others). No allowed
// hosts: outbound HTTP is refused until an admin or the operator names some.
const (
	MemoryPages        = 1024 // 64 KiB pages per instance: 64 MiB
	ActivationTimeout  = 5 * time.Minute
	TenantConcurrency  = 100 // activations of one tenant at once, over all hosts
	MaxModuleBytes     = 32 << 20
	MaxInputBytes      = 1 << 20
	MaxOutputBytes     = 1 << 20
	MaxStepOutputBytes = 1 << 20
	MaxEventBytes      = 256 << 10
	// MaxStepsPerRun: a recovery replays at most a snapshot's distance of a journal (engine's
	// SnapshotEvery) where the module is snapshotted, and a claim reads at most JournalWindow
	// entries of any: 100,000 entries cost neither a claim nor a recovery the whole journal.
	MaxStepsPerRun    = 100_000
	MaxBufferedEvents = 100 // events kept for a run before a wait takes them
)

// The bounds of a step callback's outbound HTTP (host.Outbound; `wfhost run --http-*`).
const (
	HTTPMaxRequestBytes  = 1 << 20
	HTTPMaxResponseBytes = 4 << 20
	HTTPTimeout          = 30 * time.Second // one request, its redirects included
	HTTPMaxRedirects     = 5
)

// The engine's own settings (engine.Config; `wfhost run`).
const (
	Concurrency          = 32 // activations one host runs at once
	LeaseFor             = 30 * time.Second
	PollInterval         = 10 * time.Second
	ShutdownGrace        = 10 * time.Second
	DefaultRetentionDays = 30
	MaxRetentionDays     = 365
	SweepInterval        = 5 * time.Minute
	RunStatesInterval    = 15 * time.Second // least time between two counts of live runs (wfhost_runs)
	BroadcastWindow      = 24 * time.Hour
	FaultLimit           = 10 // activations in a row that may end in a fault without progress
)
