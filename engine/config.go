package engine

import (
	"cmp"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// Config is everything an Engine needs; zero fields take the defaults documented on them.
type Config struct {
	Store   store.Store   // required
	Runtime *host.Runtime // required
	Logger  *slog.Logger  // default: discard
	// Metrics receives the engine's collectors; nil keeps them unregistered.
	Metrics prometheus.Registerer

	// Owner names this host in leases; default: a random id.
	Owner string
	// Concurrency bounds the activations running at once; default 32.
	Concurrency int
	// LeaseFor is how long a claim lasts without a heartbeat or commit; default 30s. A host
	// that dies holds its runs this long before another host may take them.
	LeaseFor time.Duration
	// PollInterval is the slow safety poll for work that no notice announced; default 10s.
	PollInterval time.Duration
	// ShutdownGrace is how long Stop lets in-flight activations finish before it cancels them
	// and releases their leases; default 10s.
	ShutdownGrace time.Duration

	// Limits bound each activation (zero fields: host.DefaultLimits).
	Limits host.Limits
	// MaxModuleBytes bounds an uploaded module; default 32 MiB.
	MaxModuleBytes int
	// MaxInputBytes bounds a run's input; default 1 MiB.
	MaxInputBytes int
	// MaxEventBytes bounds an event payload; default 256 KiB.
	MaxEventBytes int
	// MaxBufferedEvents bounds the events kept for one run before it waits on them; default 100.
	MaxBufferedEvents int
	// MaxStepsPerRun bounds a run's journal; default 10,000.
	MaxStepsPerRun int
	// DefaultRetentionDays applies when neither the workflow nor the start request sets one;
	// default 30.
	DefaultRetentionDays int
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Concurrency = cmp.Or(c.Concurrency, 32)
	c.LeaseFor = cmp.Or(c.LeaseFor, 30*time.Second)
	c.PollInterval = cmp.Or(c.PollInterval, 10*time.Second)
	c.ShutdownGrace = cmp.Or(c.ShutdownGrace, 10*time.Second)
	c.MaxModuleBytes = cmp.Or(c.MaxModuleBytes, 32<<20)
	c.MaxInputBytes = cmp.Or(c.MaxInputBytes, 1<<20)
	c.MaxEventBytes = cmp.Or(c.MaxEventBytes, 256<<10)
	c.MaxBufferedEvents = cmp.Or(c.MaxBufferedEvents, 100)
	c.MaxStepsPerRun = cmp.Or(c.MaxStepsPerRun, 10000)
	c.DefaultRetentionDays = cmp.Or(c.DefaultRetentionDays, 30)
	c.Limits.MemoryPages = cmp.Or(c.Limits.MemoryPages, host.DefaultLimits.MemoryPages)
	c.Limits.WallTime = cmp.Or(c.Limits.WallTime, host.DefaultLimits.WallTime)
	c.Limits.MaxOutputBytes = cmp.Or(c.Limits.MaxOutputBytes, host.DefaultLimits.MaxOutputBytes)
	c.Limits.MaxStepOutputBytes = cmp.Or(c.Limits.MaxStepOutputBytes, host.DefaultLimits.MaxStepOutputBytes)
}

func (c *Config) validate() error {
	switch {
	case c.Store == nil:
		return errors.New("engine config: Store is required")
	case c.Runtime == nil:
		return errors.New("engine config: Runtime is required")
	case c.Concurrency < 1:
		return errors.New("engine config: Concurrency must be at least 1")
	case c.LeaseFor < time.Second:
		return errors.New("engine config: LeaseFor must be at least 1s")
	}
	return nil
}
