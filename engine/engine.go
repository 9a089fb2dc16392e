package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wfhost/wfhost/store"
)

// errShutdown is the cancel cause of activations that Stop interrupts: their leases are
// released so another host (or this one, restarted) takes the runs at once.
var errShutdown = errors.New("engine shutting down")

// errCancelled is the cancel cause of an activation whose run was cancelled.
var errCancelled = errors.New("run cancelled")

// Engine claims runnable runs and executes them as activations: one pass of the guest over the
// run's journal, committing each new step at the guest's next durable call. It also serves the
// requests of the API (deploy, start, signal, ...). Safe for concurrent use.
type Engine struct {
	cfg     Config
	modules *moduleCache
	metrics *metrics
	tracing *tracing
	limits  limitsCache
	waiters waiters     // callers of AwaitRun
	starved atomic.Bool // the claimer stopped because every slot was taken
	// backlog is set while runnable runs may be waiting for a slot: runs this host starts are
	// then created pending and claimed in turn, not run at once ahead of them (startHere).
	backlog atomic.Bool
	// outbound counts outbound HTTP requests for the metrics.
	outbound outboundStats
	// handBacks keeps the writes ending an activation that the store did not take, and acq the
	// leases starts are creating (handback.go).
	handBacks *handBacks
	acq       *acquisitions

	wakeCh chan struct{} // capacity 1: a pending wake-up for the claimer
	slots  chan struct{} // one token per running activation

	mu     sync.Mutex
	active map[string]*activation // by run id
	// interrupted is set, under mu, when Stop's grace period is over: an activation that
	// registers after that (a run started here just then) is interrupted at once.
	interrupted bool

	lifeMu  sync.Mutex
	started bool
	stopped bool
	life    context.Context // Start's: activations run under it
	stopFn  context.CancelCauseFunc
	loops   sync.WaitGroup // claimer, sweeper, listener, heartbeat
	workers sync.WaitGroup // activations
	drain   chan struct{}  // closed by Stop: claim nothing more
	// claimerDone is closed when the claim loop has returned: only it adds to workers, and a
	// WaitGroup must not be added to while Stop waits on it.
	claimerDone chan struct{}
}

// activation is the bookkeeping of one running pass, for cancel notices and heartbeats.
type activation struct {
	lease  store.Lease
	cancel context.CancelCauseFunc
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
	m := newMetrics(cfg.Metrics)
	acq := newAcquisitions()
	// Every store call goes through the wrapper, so commit latencies count whoever makes them.
	cfg.Store = observedStore{Store: cfg.Store, m: m, acq: acq}
	e := &Engine{
		cfg:         cfg,
		modules:     newModuleCache(cfg.Store, cfg.Runtime),
		limits:      limitsCache{entries: make(map[string]limitsEntry)},
		outbound:    newOutboundCounter(cfg.Metrics),
		metrics:     m,
		tracing:     newTracing(cfg.TracerProvider),
		wakeCh:      make(chan struct{}, 1),
		slots:       make(chan struct{}, cfg.Concurrency),
		active:      make(map[string]*activation),
		drain:       make(chan struct{}),
		claimerDone: make(chan struct{}),
	}
	e.handBacks = newHandBacks(cfg.Store, cfg.Logger)
	e.acq = acq
	// Until the claimer's first look, runs left from before this host started may be waiting.
	e.backlog.Store(true)
	return e, nil
}

// Start launches the claimer, the notice listener and the lease heartbeat. They run until Stop,
// whatever becomes of ctx (only its values are kept), so a shutdown always goes through Stop's
// drain-then-release order. Start may be called once.
func (e *Engine) Start(ctx context.Context) error {
	e.lifeMu.Lock()
	defer e.lifeMu.Unlock()
	if e.started {
		return errors.New("engine: already started")
	}
	e.started = true
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	e.stopFn = cancel
	e.life = ctx
	e.loops.Add(5)
	go func() { defer e.loops.Done(); defer close(e.claimerDone); e.claimLoop(ctx) }()
	go func() { defer e.loops.Done(); e.sweepLoop(ctx) }()
	go func() { defer e.loops.Done(); e.listenLoop(ctx) }()
	go func() { defer e.loops.Done(); e.heartbeatLoop(ctx) }()
	go func() { defer e.loops.Done(); e.handBacks.loop(ctx) }()
	e.wake()
	return nil
}

// Stop claims nothing more, lets in-flight activations finish for up to ShutdownGrace, then
// interrupts the rest and releases their leases. It is idempotent and safe before Start.
func (e *Engine) Stop() {
	e.lifeMu.Lock()
	if !e.started || e.stopped {
		e.stopped = true
		e.lifeMu.Unlock()
		return
	}
	e.stopped = true
	close(e.drain)
	e.lifeMu.Unlock()

	// The claimer may be launching what its last claim returned; those runs are drained too.
	// A claim stuck on the database is cancelled once the grace period is over.
	select {
	case <-e.claimerDone:
	case <-time.After(e.cfg.ShutdownGrace):
		e.stopFn(errShutdown)
		<-e.claimerDone
	}
	done := make(chan struct{})
	go func() { e.workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(e.cfg.ShutdownGrace):
		e.mu.Lock()
		e.interrupted = true
		for _, a := range e.active {
			a.cancel(errShutdown)
		}
		e.mu.Unlock()
		<-done
	}
	// The last activations' ends that the store did not take get one more try; a store still
	// away leaves their leases to run out.
	if e.handBacks.count() > 0 {
		e.handBacks.round(context.Background(), true)
	}
	e.stopFn(errShutdown)
	e.loops.Wait()
}

// Owner is the name this engine gives itself in leases.
func (e *Engine) Owner() string { return e.cfg.Owner }

// wake tells the claimer to look for work now.
func (e *Engine) wake() {
	select {
	case e.wakeCh <- struct{}{}:
	default:
	}
}

// wakeAt wakes the claimer at t: a run this host suspended becomes runnable then, and no other
// notice will announce it.
func (e *Engine) wakeAt(t time.Time) {
	time.AfterFunc(time.Until(t), e.wake)
}

// cancelLocal stops the activation of runID if this host is running it.
func (e *Engine) cancelLocal(runID string) {
	e.mu.Lock()
	a := e.active[runID]
	e.mu.Unlock()
	if a != nil {
		a.cancel(errCancelled)
	}
}

func (e *Engine) draining() bool {
	select {
	case <-e.drain:
		return true
	default:
		return false
	}
}

// claimLoop claims as many runs as there are free slots whenever something may be runnable:
// after a notice, a local timer, a finished activation that found the slots full, or the
// safety poll. Only the poll asks the store when the next timer is due: timers this host sets
// wake it by themselves (wakeAt), and a notice announces new work, so the question is needed
// only for timers another host set and can no longer serve, and costs a query otherwise.
func (e *Engine) claimLoop(ctx context.Context) {
	poll := time.NewTimer(0)
	defer poll.Stop()
	for {
		polled := false
		select {
		case <-ctx.Done():
			return
		case <-e.drain:
			return
		case <-e.wakeCh:
		case <-poll.C:
			polled = true
		}
		next := e.claimAvailable(ctx, polled)
		if !polled {
			// Keep the poll's own schedule: a wake-up neither resets nor advances it.
			if !next.IsZero() {
				e.wakeAt(next)
			}
			continue
		}
		wait := e.cfg.PollInterval
		if !next.IsZero() {
			if d := time.Until(next); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		poll.Reset(wait)
	}
}

// claimAvailable claims until there is no more runnable work or no free slot. With
// askNext it returns the next time work becomes claimable, when it knows it (zero otherwise).
func (e *Engine) claimAvailable(ctx context.Context, askNext bool) time.Time {
	for !e.draining() && ctx.Err() == nil {
		// The slots are taken before the claim, so a run started on this host meanwhile
		// cannot leave a claimed run waiting for one with its lease running out.
		free := e.takeFreeSlots()
		if free == 0 {
			// A finishing activation wakes the loop. Set the flag, then look again, so a slot
			// freed in between is either seen here or announced by its activation.
			e.backlog.Store(true)
			e.starved.Store(true)
			if free = e.takeFreeSlots(); free == 0 {
				return time.Time{}
			}
			e.starved.Store(false)
		}
		e.releaseUnknownLeases(ctx)
		claims, err := e.cfg.Store.ClaimRuns(ctx, store.ClaimParams{
			Owner: e.cfg.Owner, Limit: free, LeaseFor: e.cfg.LeaseFor, TenantConcurrency: e.cfg.TenantDefaults.Concurrency,
		})
		for range free - len(claims) {
			<-e.slots
		}
		if err != nil {
			e.acq.failed(err)
			if ctx.Err() == nil {
				e.cfg.Logger.Error("claim runs", "err", err)
			}
			return time.Now().Add(time.Second)
		}
		for _, c := range claims {
			e.workers.Add(1)
			e.execute(ctx, c)
		}
		if len(claims) < free {
			e.backlog.Store(false)
			if !askNext {
				return time.Time{}
			}
			at, ok, err := e.cfg.Store.NextWakeup(ctx)
			if err != nil || !ok {
				return time.Time{}
			}
			return at
		}
	}
	return time.Time{}
}

// takeFreeSlots takes every free slot and says how many it took.
func (e *Engine) takeFreeSlots() int {
	for n := 0; ; n++ {
		select {
		case e.slots <- struct{}{}:
		default:
			return n
		}
	}
}

// execute runs a claim in its own goroutine, in a slot and a worker count already taken.
func (e *Engine) execute(ctx context.Context, c store.Claim) {
	actx, cancel := context.WithCancelCause(ctx)
	e.mu.Lock()
	e.active[c.Run.ID] = &activation{lease: c.Lease, cancel: cancel}
	e.acq.registered(c.Run.ID)
	if e.interrupted {
		cancel(errShutdown)
	}
	e.mu.Unlock()
	go func() {
		var ended *store.Run
		defer func() {
			e.mu.Lock()
			delete(e.active, c.Run.ID)
			e.mu.Unlock()
			cancel(nil)
			e.freeSlot()
			// After the slot is free: a caller of StartAndAwait that starts its next run at
			// once finds the slot this one held, and runs it here without queueing.
			if ended != nil {
				e.waiters.notify(ended.ID, ended)
			}
		}()
		ended = e.activate(actx, c)
	}()
}

// freeSlot gives back a slot and its worker count.
func (e *Engine) freeSlot() {
	<-e.slots
	e.workers.Done()
	// A free slot matters only if the claimer stopped for want of one; otherwise every claim
	// would be followed by a useless one when its run ends.
	if e.starved.CompareAndSwap(true, false) {
		e.wake()
	}
}

// reserveSlot takes a slot for a run this host is starting, when it may run the run at once
// (see startRun): the engine is running and not draining, a slot is free and no runnable run
// is known to wait for one. Stop sets stopped under lifeMu before it waits for the workers,
// so a worker is counted here before that wait or not at all.
func (e *Engine) reserveSlot() (context.Context, bool) {
	if e.backlog.Load() {
		return nil, false
	}
	e.lifeMu.Lock()
	defer e.lifeMu.Unlock()
	if !e.started || e.stopped {
		return nil, false
	}
	select {
	case e.slots <- struct{}{}:
		e.workers.Add(1)
		return e.life, true
	default:
		// The run goes to the queue; later starts queue behind it.
		e.backlog.Store(true)
		return nil, false
	}
}

// listenLoop turns store notices into wake-ups and cancellations, reconnecting after failures.
func (e *Engine) listenLoop(ctx context.Context) {
	notices := make(chan store.Notice, 64)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case n := <-notices:
				switch n.Kind {
				case store.NoticeWake:
					if !n.Self {
						// Another host queued a run: let the claimer take it before this
						// host's own starts run ahead of it.
						e.backlog.Store(true)
						e.wake()
					}
				case store.NoticeCancel:
					e.cancelLocal(n.RunID)
				}
			}
		}
	}()
	for ctx.Err() == nil {
		err := e.cfg.Store.Listen(ctx, notices)
		if ctx.Err() != nil {
			return
		}
		e.cfg.Logger.Warn("listen for notices; retrying", "err", err)
		e.wake() // a notice may have been missed while disconnected
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// heartbeatLoop renews the leases of running activations, so a long step keeps its run, and
// stops any activation whose lease was lost. It renews the leases of kept hand-backs too, so a
// run waits for its end to be written, not for its lease to run out.
func (e *Engine) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(e.cfg.LeaseFor / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e.mu.Lock()
		leases := make([]store.Lease, 0, len(e.active))
		for _, a := range e.active {
			leases = append(leases, a.lease)
		}
		e.mu.Unlock()
		kept := e.handBacks.leases()
		leases = append(leases, kept...)
		if len(leases) == 0 {
			continue
		}
		held, err := e.cfg.Store.ExtendLeases(ctx, leases, e.cfg.LeaseFor)
		if err != nil {
			e.cfg.Logger.Warn("extend leases", "err", err)
			continue
		}
		still := make(map[store.Lease]bool, len(held))
		for _, l := range held {
			still[l] = true
		}
		e.mu.Lock()
		for id, a := range e.active {
			if !still[a.lease] && containsLease(leases, a.lease) {
				a.cancel(fmt.Errorf("run %s: %w", id, store.ErrLeaseLost))
			}
		}
		e.mu.Unlock()
		for _, l := range kept {
			if !still[l] {
				e.handBacks.lost(l)
			}
		}
	}
}

func containsLease(ls []store.Lease, l store.Lease) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}
