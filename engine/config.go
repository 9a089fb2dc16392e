package engine

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/internal/defaults"
	"github.com/wfhost/wfhost/internal/envelope"
	"github.com/wfhost/wfhost/store"
)

// Config is everything an Engine needs; zero fields take the defaults documented on them, whose
// values are internal/defaults' (the daemon's flags show the same).
type Config struct {
	Store   store.Store   // required
	Runtime *host.Runtime // required
	Logger  *slog.Logger  // default: discard
	// Metrics receives the engine's collectors; nil keeps them unregistered.
	Metrics prometheus.Registerer
	// TracerProvider receives the engine's spans (workflow.run, workflow.activation,
	// workflow.step, workflow.signal, workflow.end, workflow.start); nil makes none. Build it with
	// sdktrace.WithIDGenerator(TraceIDGenerator()) so each run's spans hang under its
	// workflow.run span (see tracing.go).
	TracerProvider trace.TracerProvider
	// Version names this build in wfhost_build_info and in the spans' resource (the daemon's
	// own); default "devel".
	Version string
	// RunStatesInterval is the least time between two counts of the store's live runs for
	// the wfhost_runs gauge (runstates.go); scrapes in between serve the last count. Default
	// defaults.RunStatesInterval (15s).
	RunStatesInterval time.Duration

	// Clock is the engine's time: its timers and tickers, the times it writes (step starts,
	// due times, ends), backoffs and the limits cache; default the system's (clock.Real). A
	// test gives a clock.Fake and moves time instead of sleeping. With Postgres, when a run
	// is due and when a lease runs out are still the database's to say (store/postgres).
	Clock clock.Clock
	// Rand draws the retry backoff's jitter; default math/rand/v2's global source.
	Rand clock.Rand

	// Owner names this host in leases; default: a random id.
	Owner string
	// Concurrency bounds the activations running at once; default defaults.Concurrency (32).
	Concurrency int
	// ReservedSlots are slots beyond Concurrency kept for tenants with nothing in flight on
	// this host (fairness.go): such a tenant's run started here, or its parked run resumed,
	// takes one when the others are taken; default defaults.ReservedSlots (an eighth of
	// Concurrency, at least 1); -1: none.
	ReservedSlots int
	// TenantStarts bounds one tenant's starts in flight on this host at once while another
	// tenant is about (fairness.go); default defaults.TenantStarts (twice the cores). A tenant
	// alone is not bounded.
	TenantStarts int
	// LeaseFor is how long a claim lasts without a heartbeat or commit; default 30s. A host
	// that dies holds its runs this long before another host may take them.
	LeaseFor time.Duration
	// PollInterval is the slow safety poll for work that no notice announced; default 10s.
	PollInterval time.Duration
	// ShutdownGrace is how long Stop lets in-flight activations finish before it cancels them
	// and releases their leases; default 10s.
	ShutdownGrace time.Duration
	// FaultLimit is how many activations in a row may end in a fault that is not the
	// workflow's, with no journal progress between them (the store unreachable mid-pass, the
	// run's host dying or hanging, its module unreadable), before the run is failed with code
	// no_progress (abi.CodeNoProgress) instead of being activated again; default 10. A graceful
	// shutdown's hand-back is no fault, and any journal write starts the count again.
	FaultLimit int

	// ParkMemory bounds the memory of the passes this host keeps parked while their runs
	// sleep or wait (parking.go), least recently parked evicted first; default
	// defaults.ParkMemory() (a 32nd of the machine's memory, 64 MiB to 1 GiB); negative turns
	// parking off. ParkHorizon is the furthest ahead a sleep's or a backoff's wake-up may be
	// for its pass to be parked; default 10 minutes. A wait for an event parks whatever its
	// timeout: the event may come at any time.
	ParkMemory  int64
	ParkHorizon time.Duration

	// JournalWindow is the most journal entries a claim reads per run; a replay reads the rest a
	// page of this many at a time as it reaches them, so a claim of long runs stays bounded.
	// Default defaults.JournalWindow (1,000).
	JournalWindow int

	// SnapshotEvery is how many journal entries a pass goes between durable snapshots of its
	// guest, for modules the Runtime transformed (host.Config.Snapshots; snapshots.go); default
	// defaults.SnapshotEvery (100); negative takes none (runs then always replay from the top).
	SnapshotEvery int

	// TenantDefaults are the limits of every tenant that does not override them; zero fields
	// take DefaultTenantLimits' (memory 1024 pages, activations of 5 minutes, 100 concurrent
	// activations per tenant over all hosts, modules 32 MiB, input, output and step output
	// 1 MiB, events 256 KiB, 100,000 steps per run, 100 events buffered per run, no allowed
	// hosts). Each must be within limitRanges (and at least 1): New refuses it otherwise.
	TenantDefaults store.Limits

	// DefaultRetentionDays applies when neither the workflow nor the start request sets one;
	// default 30.
	DefaultRetentionDays int
	// MaxRetentionDays clamps every run's retention; default 365.
	MaxRetentionDays int
	// SweepInterval is how often terminal runs past their retention are deleted (and the
	// children a parent's end left running are cancelled: sweeper.closeOrphans); default 5m.
	SweepInterval time.Duration
	// SchedulePoll is the longest the scheduler loop sleeps between looks at the store
	// (schedules.go): how late a host notices a schedule created or resumed on another host,
	// or a buffered fire time whose live run ended; default 10s. Due fire times it knows of
	// wake it at their time.
	SchedulePoll time.Duration
	// BroadcastWindow is how long a broadcast event is kept for waits reached after it was
	// sent (and how long its event id deduplicates); default 24h. The sweeper prunes older
	// ones, so a broadcast lives between the window and the window plus one SweepInterval.
	BroadcastWindow time.Duration

	// AllowPrivateHosts lets outbound HTTP reach loopback, private, link-local and other
	// non-public addresses, for local development and tests. Off by default: a tenant reaches
	// only public addresses. On, every tenant whose allowlist names a host (or an address)
	// reaches whatever that host resolves to on the daemon's own network, cloud metadata
	// endpoints included.
	AllowPrivateHosts bool
	// HTTPTransport, when set, carries the guests' outbound requests instead of the network
	// (host.Outbound.Transport): the test harness's fakes. Nil in a daemon.
	HTTPTransport http.RoundTripper
	// MaxHTTPRequestBytes and MaxHTTPResponseBytes bound outbound bodies, HTTPTimeout one
	// request and MaxHTTPRedirects the redirects it follows; zero takes host.DefaultOutbound's
	// (1 MiB, 4 MiB, 30s, 5).
	MaxHTTPRequestBytes  int
	MaxHTTPResponseBytes int
	HTTPTimeout          time.Duration
	MaxHTTPRedirects     int

	// SecretKeys seals secret values before the store keeps them and opens them for step
	// callbacks (envelope encryption: secrets.go). Nil: PutSecret refuses with
	// ErrSecretsDisabled, and only values stored before encryption can be read.
	SecretKeys *envelope.Keyring

	// HookPoll is how often the webhook dispatcher looks for due deliveries when it knows of
	// none sooner; default DefaultHookPoll. HookAttempts bounds a webhook's attempts (default
	// DefaultHookAttempts); HookBackoff is the wait after the first failed attempt, doubled
	// after each one after it, never more than an hour (default DefaultHookBackoff).
	HookPoll     time.Duration
	HookAttempts int
	HookBackoff  time.Duration
}

func (c *Config) setDefaults() {
	c.Version = cmp.Or(c.Version, "devel")
	c.RunStatesInterval = cmp.Or(c.RunStatesInterval, defaults.RunStatesInterval)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Rand == nil {
		c.Rand = clock.RealRand{}
	}
	c.Concurrency = cmp.Or(c.Concurrency, defaults.Concurrency)
	switch c.ReservedSlots {
	case 0:
		c.ReservedSlots = defaults.ReservedSlots(c.Concurrency)
	case -1:
		c.ReservedSlots = 0
	}
	c.TenantStarts = cmp.Or(c.TenantStarts, defaults.TenantStarts())
	c.LeaseFor = cmp.Or(c.LeaseFor, defaults.LeaseFor)
	c.PollInterval = cmp.Or(c.PollInterval, defaults.PollInterval)
	c.ShutdownGrace = cmp.Or(c.ShutdownGrace, defaults.ShutdownGrace)
	c.FaultLimit = cmp.Or(c.FaultLimit, defaults.FaultLimit)
	if c.ParkMemory == 0 {
		c.ParkMemory = defaults.ParkMemory()
	}
	c.ParkHorizon = cmp.Or(c.ParkHorizon, defaults.ParkHorizon)
	c.SnapshotEvery = cmp.Or(c.SnapshotEvery, defaults.SnapshotEvery)
	c.JournalWindow = cmp.Or(c.JournalWindow, defaults.JournalWindow)
	c.TenantDefaults = c.TenantDefaults.Or(DefaultTenantLimits())
	c.DefaultRetentionDays = cmp.Or(c.DefaultRetentionDays, defaults.DefaultRetentionDays)
	c.MaxRetentionDays = cmp.Or(c.MaxRetentionDays, defaults.MaxRetentionDays)
	c.SweepInterval = cmp.Or(c.SweepInterval, defaults.SweepInterval)
	c.BroadcastWindow = cmp.Or(c.BroadcastWindow, defaults.BroadcastWindow)
	c.SchedulePoll = cmp.Or(c.SchedulePoll, DefaultSchedulePoll)
	c.HookPoll = cmp.Or(c.HookPoll, DefaultHookPoll)
	c.HookAttempts = cmp.Or(c.HookAttempts, DefaultHookAttempts)
	c.HookBackoff = cmp.Or(c.HookBackoff, DefaultHookBackoff)
	out := host.DefaultOutbound()
	c.MaxHTTPRequestBytes = cmp.Or(c.MaxHTTPRequestBytes, out.MaxRequestBytes)
	c.MaxHTTPResponseBytes = cmp.Or(c.MaxHTTPResponseBytes, out.MaxResponseBytes)
	c.HTTPTimeout = cmp.Or(c.HTTPTimeout, out.Timeout)
	c.MaxHTTPRedirects = cmp.Or(c.MaxHTTPRedirects, out.MaxRedirects)
}

// DefaultTenantLimits are the limits of a tenant that neither it nor the operator
// (Config.TenantDefaults) set: internal/defaults', whose activation limits are the host's
// (host.DefaultLimits).
func DefaultTenantLimits() store.Limits {
	activation := host.DefaultLimits()
	return store.Limits{
		MemoryPages:         int(activation.MemoryPages),
		ActivationTimeoutMs: activation.WallTime.Milliseconds(),
		Concurrency:         defaults.TenantConcurrency,
		MaxModuleBytes:      defaults.MaxModuleBytes,
		MaxInputBytes:       defaults.MaxInputBytes,
		MaxOutputBytes:      activation.MaxOutputBytes,
		MaxStepOutputBytes:  activation.MaxStepOutputBytes,
		MaxEventBytes:       defaults.MaxEventBytes,
		MaxStepsPerRun:      defaults.MaxStepsPerRun,
		MaxBufferedEvents:   defaults.MaxBufferedEvents,
	}
}

// hostLimits are the activation limits of a tenant's effective limits.
func hostLimits(l store.Limits) host.Limits {
	return host.Limits{
		MemoryPages:        uint32(l.MemoryPages),
		WallTime:           time.Duration(l.ActivationTimeoutMs) * time.Millisecond,
		MaxOutputBytes:     l.MaxOutputBytes,
		MaxStepOutputBytes: l.MaxStepOutputBytes,
	}
}

func (c *Config) validate() error {
	switch {
	case c.Store == nil:
		return errors.New("engine config: Store is required")
	case c.Runtime == nil:
		return errors.New("engine config: Runtime is required")
	// Zero took the default: what is left below zero would be a claimer that polls without
	// pause, a sweeper whose ticker panics, a shutdown that waits for nothing.
	case c.PollInterval < 0:
		return errors.New("engine config: PollInterval must not be negative (0 takes the default)")
	case c.SweepInterval < 0:
		return errors.New("engine config: SweepInterval must not be negative (0 takes the default)")
	case c.SchedulePoll < 0:
		return errors.New("engine config: SchedulePoll must not be negative (0 takes the default)")
	case c.RunStatesInterval < 0:
		return errors.New("engine config: RunStatesInterval must not be negative (0 takes the default)")
	case c.ShutdownGrace < 0:
		return errors.New("engine config: ShutdownGrace must not be negative (0 takes the default)")
	case c.Concurrency < 1:
		return errors.New("engine config: Concurrency must be at least 1")
	case c.ReservedSlots < 0 || c.ReservedSlots > c.Concurrency:
		return fmt.Errorf("engine config: ReservedSlots must be -1 (none) or at most Concurrency (%d), not %d", c.Concurrency, c.ReservedSlots)
	case c.TenantStarts < 1:
		return errors.New("engine config: TenantStarts must be at least 1")
	case c.LeaseFor < time.Second:
		return errors.New("engine config: LeaseFor must be at least 1s")
	case c.FaultLimit < 1:
		return errors.New("engine config: FaultLimit must be at least 1")
	case c.ParkHorizon < 0:
		return errors.New("engine config: ParkHorizon must not be negative (0 takes the default)")
	case c.JournalWindow < 0:
		return errors.New("engine config: JournalWindow must not be negative (0 takes the default)")
	case c.MaxRetentionDays < 1 || c.DefaultRetentionDays < 1:
		return errors.New("engine config: retention days must be at least 1")
	case c.BroadcastWindow < time.Second:
		return errors.New("engine config: BroadcastWindow must be at least 1s")
	case c.MaxHTTPRequestBytes < 0 || c.MaxHTTPResponseBytes < 0 || c.HTTPTimeout < 0 || c.MaxHTTPRedirects < 0:
		return errors.New("engine config: the outbound HTTP bounds must not be negative")
	}
	return validTenantDefaults(c.TenantDefaults)
}

// validTenantDefaults checks the operator's tenant limits, every zero already taken from
// DefaultTenantLimits: each within limitRanges, as an admin's would be, and at least 1, since
// a default of 0 is no limit at all.
func validTenantDefaults(l store.Limits) error {
	for _, r := range limitRanges {
		if v := r.get(l); v < 1 || v > r.Max {
			return fmt.Errorf("engine config: TenantDefaults.%s must be from 1 to %d, not %d", r.Name, r.Max, v)
		}
	}
	if err := validLimits(store.Limits{AllowedHosts: l.AllowedHosts}); err != nil {
		return fmt.Errorf("engine config: TenantDefaults: %w", err)
	}
	return nil
}
