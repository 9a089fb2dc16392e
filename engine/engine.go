package engine

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
)

// errShutdown is the cancel cause of activations that Stop interrupts: their leases are
// released so another host (or this one, restarted) takes the runs at once.
var errShutdown = errors.New("engine shutting down")

// errCancelled is the cancel cause of an activation whose run was cancelled.
var errCancelled = errors.New("run cancelled")

// Engine is the one thing a daemon builds: an Executor, which claims and runs activations in
// the background between Start and Stop, and a Service, which serves the requests of the API
// (deploy, start, signal, ...) at once, whether or not the Executor runs. Both are embedded, so
// an Engine has the methods of each; each can also be handed on alone (the API takes the
// Service behind an interface of its own). Safe for concurrent use.
type Engine struct {
	*Executor
	*Service
}

// New validates cfg and returns an engine that serves requests at once and executes runs once
// started.
func New(cfg Config) (*Engine, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Owner == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		cfg.Owner = "host-" + hex.EncodeToString(b[:])
	}
	m := newMetrics(cfg.Metrics, cfg)
	acq := newAcquisitions()
	// Every store call goes through the wrapper, so commit latencies count whoever makes them.
	cfg.Store = observedStore{Store: cfg.Store, m: m, acq: acq}
	sh := &shared{
		cfg:     cfg,
		obs:     &observer{log: cfg.Logger, m: m, t: newTracing(cfg.TracerProvider), outbound: newOutboundCounter(cfg.Metrics)},
		modules: newModuleCache(cfg.Store, cfg.Runtime),
		limits:  newLimitsCache(cfg.Store, cfg.TenantDefaults, cfg.Clock),
		waiters: &waiters{},
		tokens:  newTokenCache(cfg.Clock),

		upgradeMetrics: newUpgradeMetrics(cfg.Metrics),
	}
	x := newExecutor(sh, acq)
	svc := &Service{shared: sh, exec: x}
	x.events = svc
	x.scheduler.svc = svc
	x.sweeper.svc = svc
	return &Engine{Executor: x, Service: svc}, nil
}

// shared is what the Executor and the Service both read: the settings, the telemetry and the
// caches that one fills and the other uses (a deploy puts the module an activation loads; an
// activation's end wakes AwaitRun's callers). Each part is safe for concurrent use.
type shared struct {
	cfg     Config
	obs     *observer // every metric and span
	modules *moduleCache
	limits  *limitsCache
	waiters *waiters // callers of AwaitRun
	tokens  *tokenCache

	upgradeMetrics *upgradeMetrics // the upgrade gate's (upgrade.go)
}
