package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/internal/lifecycle"
	"github.com/wfhost/wfhost/internal/shares"
	"github.com/wfhost/wfhost/store"
)

// Executor claims runnable runs and executes them as activations: one pass of the guest over
// the run's journal, committing each new step at the guest's next durable call. Its background
// loops (the claimer, the notice listener, the lease heartbeat, the retention sweeper, the
// scheduler and the hand-back retrier) share one lifecycle: they run from Start to Stop. Safe
// for concurrent use.
type Executor struct {
	*shared
	// events sends the events step callbacks send (event_send), as the API's signals and
	// broadcasts are sent: the engine's Service, set by New.
	events  eventService
	starved atomic.Bool // the claimer stopped because every slot was taken
	// unclaimable is set while the store says runs are due that the last claim did not take
	// (a tenant at its concurrency cap, mostly): a slot freed here may let one be taken.
	// recheck is the claimer's growing wait before it asks again (claimLoop).
	unclaimable atomic.Bool
	recheck     time.Duration
	// backlog is set while runnable runs may be waiting for a slot: runs this host starts are
	// then created pending and claimed in turn, not run at once ahead of them (startHere).
	backlog atomic.Bool
	// handBacks keeps the writes ending an activation that the store did not take, and acq the
	// leases starts are creating (handback.go).
	handBacks *handBacks
	acq       *acquisitions
	sweeper   *sweeper
	hooks     *dispatcher // webhook deliveries (hooks.go)
	scheduler *scheduler  // fires due schedules (schedules.go)
	// parking keeps the passes parked on this host (parking.go); nil when parking is off.
	parking *parking
	// snapshots is the durable snapshot policy (snapshots.go); nil when they are off.
	snapshots *snapshots

	wakeCh chan struct{} // capacity 1: a pending wake-up for the claimer
	// wakeups is the claimer's timer for the runs this host suspended (wakeups.go); askNext is
	// set when it fired with later wake-ups left to the store's next due time.
	wakeups *wakeups
	askNext atomic.Bool
	// slots has a token per running activation, up to Config.Concurrency; reserved has
	// Config.ReservedSlots more, which go only to a run of a tenant with nothing in flight
	// here (fairness.go).
	slots    chan struct{}
	reserved chan struct{}
	// starts shares this host's starts among the tenants (fairness.go); every activation
	// joins it too, so a tenant with runs in flight here counts as about, and its joins are the
	// tenant's activations in flight here (quietHere).
	starts *shares.Pool

	mu     sync.Mutex
	active map[string]*activation // by run id
	// missed are the cancel and pause notices that found no activation here (missed.go).
	missed missedNotices
	// interrupted is set, under mu, when Stop's grace period is over: an activation that
	// registers after that (a run started here just then) is interrupted at once.
	interrupted bool

	life    lifecycle.Group // claimer, sweeper, scheduler, listener, heartbeat, hand-back retrier
	drain   <-chan struct{} // life.Draining(): closed when Stop begins; claim nothing more
	workers sync.WaitGroup  // activations
	// claimerDone is closed when the claim loop has returned: only it adds to workers, and a
	// WaitGroup must not be added to while Stop waits on it.
	claimerDone chan struct{}
}

// activation is the bookkeeping of one running pass, for cancel notices and heartbeats.
type activation struct {
	runID  string
	tenant string
	lease  store.Lease // under Executor.mu: a resumed pass has a new one
	cancel context.CancelCauseFunc
	// slot is the slots channel whose token the activation holds (Executor.slots or
	// Executor.reserved), nil while the pass is parked away from it (parking.go). Only the
	// activation's goroutine touches it.
	slot chan struct{}
	// about is the activation's entry in Executor.starts, nil while the pass is parked: a
	// parked run's tenant is not about (a timer, not the tenant, decides when it runs).
	about *shares.Tenant
	// cancelAsk is raised when a cancel is asked of the run while it is active here (cancel.go);
	// grace terminates it at the end of its grace period, if it still runs then.
	cancelAsk *cancelSignal
	grace     clock.Timer
	// pauseAsk is set when a pause is asked of the run while it is active here (pause.go), and
	// cleared when the pass finds it withdrawn.
	pauseAsk atomic.Bool
}

func newExecutor(sh *shared, acq *acquisitions) *Executor {
	x := &Executor{
		shared:      sh,
		handBacks:   newHandBacks(sh.cfg.Store, sh.cfg.Logger, sh.cfg.Clock),
		acq:         acq,
		sweeper:     newSweeper(sh.cfg, sh.obs),
		scheduler:   newScheduler(sh.cfg, sh.obs),
		hooks:       newDispatcher(sh.cfg, sh.limits, sh.obs.m),
		wakeCh:      make(chan struct{}, 1),
		slots:       make(chan struct{}, sh.cfg.Concurrency),
		reserved:    make(chan struct{}, sh.cfg.ReservedSlots),
		starts:      shares.New(sh.cfg.TenantStarts, shares.PresenceWindow),
		active:      make(map[string]*activation),
		missed:      missedNotices{keep: sh.cfg.LeaseFor},
		claimerDone: make(chan struct{}),
	}
	x.wakeups = &wakeups{clock: sh.cfg.Clock, fire: func(askNext bool) {
		if askNext {
			x.askNext.Store(true)
		}
		x.wake()
	}}
	if sh.cfg.ParkMemory > 0 {
		x.parking = newParking(uint64(sh.cfg.ParkMemory))
		if reg := sh.cfg.Metrics; reg != nil {
			reg.MustRegister(
				prometheus.NewGaugeFunc(prometheus.GaugeOpts{
					Name: "wfhost_parked_passes", Help: "Passes parked on this host now, their runs sleeping or waiting.",
				}, func() float64 { n, _ := x.parking.stats(); return float64(n) }),
				prometheus.NewGaugeFunc(prometheus.GaugeOpts{
					Name: "wfhost_parked_bytes", Help: "What the passes parked on this host are taken to cost (linear memory and overhead), against --park-memory.",
				}, func() float64 { _, b := x.parking.stats(); return float64(b) }))
		}
	}
	x.snapshots = newSnapshots(sh.cfg.SnapshotEvery, sh.cfg.SecretKeys, sh.obs)
	x.drain = x.life.Draining()
	// Until the claimer's first look, runs left from before this host started may be waiting.
	x.backlog.Store(true)
	return x
}

// Start launches the background loops. They run until Stop, whatever becomes of ctx (only its
// values are kept), so a shutdown always goes through Stop's drain-then-release order. Start
// may be called once; a second call, or one after Stop, is an error and starts nothing.
func (x *Executor) Start(ctx context.Context) error {
	err := x.life.Start(ctx,
		func(ctx context.Context) { defer close(x.claimerDone); x.claimLoop(ctx) },
		func(ctx context.Context) { x.sweeper.loop(ctx, x.drain) },
		func(ctx context.Context) { x.scheduler.loop(ctx, x.drain) },
		func(ctx context.Context) { x.hooks.loop(ctx, x.drain) },
		x.listenLoop,
		x.heartbeatLoop,
		x.handBacks.loop,
	)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	x.wake()
	return nil
}

// Stop claims nothing more, lets in-flight activations finish for up to ShutdownGrace, then
// interrupts the rest and releases their leases, and returns when every loop has. It is
// idempotent, safe before Start and concurrently with Start or another Stop.
func (x *Executor) Stop() { x.life.Stop(x.drainActivations) }

// drainActivations is Stop's work while the loops still run: the heartbeat keeps renewing
// the leases of the activations it waits for.
func (x *Executor) drainActivations() {
	// The claimer may be launching what its last claim returned; those runs are drained too.
	// A claim stuck on the database is cancelled once the grace period is over. (Stop calls
	// this only on a started Executor, so the claimer exists.)
	select {
	case <-x.claimerDone:
	case <-clock.After(x.cfg.Clock, x.cfg.ShutdownGrace):
		x.life.Cancel(errShutdown)
		<-x.claimerDone
	}
	// Parked passes hold no lease and no slot: their runs are durably suspended, and they
	// unwind at once.
	x.closeParking()
	done := make(chan struct{})
	go func() { x.workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-clock.After(x.cfg.Clock, x.cfg.ShutdownGrace):
		x.mu.Lock()
		x.interrupted = true
		for _, a := range x.active {
			a.cancel(errShutdown)
		}
		x.mu.Unlock()
		<-done
	}
	// The last activations' ends that the store did not take get one more try; a store still
	// away leaves their leases to run out.
	if x.handBacks.count() > 0 {
		x.handBacks.round(context.Background(), true)
	}
}

// Owner is the name this engine gives itself in leases.
func (x *Executor) Owner() string { return x.cfg.Owner }

// wake tells the claimer to look for work now.
func (x *Executor) wake() {
	select {
	case x.wakeCh <- struct{}{}:
	default:
	}
}

// wakeAt wakes the claimer at t at the latest: a run this host suspended becomes runnable
// then, and no other notice will announce it. One timer serves them all (wakeups.go).
func (x *Executor) wakeAt(t time.Time) { x.wakeups.wakeAt(t) }

// cancelLocal stops the activation of runID if this host is running it.
func (x *Executor) cancelLocal(runID string) {
	x.mu.Lock()
	a := x.active[runID]
	x.mu.Unlock()
	if a != nil {
		a.cancel(errCancelled)
	}
	x.unpark(runID, "cancelled")
}

func (x *Executor) draining() bool {
	select {
	case <-x.drain:
		return true
	default:
		return false
	}
}

// claimLoop claims as many runs as there are free slots whenever something may be runnable:
// after a notice, the local timer, a finished activation that found the slots full, or the
// safety poll. The store is asked when the next timer is due only by the poll, for timers
// another host set and can no longer serve, and when the local timer fired with later
// wake-ups left to that answer (wakeups.go); a notice announces new work by itself.
func (x *Executor) claimLoop(ctx context.Context) {
	poll := x.cfg.Clock.NewTimer(0)
	defer poll.Stop()
	defer x.wakeups.stop()
	for {
		polled := false
		select {
		case <-ctx.Done():
			return
		case <-x.drain:
			return
		case <-x.wakeCh:
		case <-poll.C():
			polled = true
		}
		asked := polled || x.askNext.Swap(false)
		next := x.claimAvailable(ctx, asked)
		if asked {
			next = x.afterShortClaim(next)
		}
		if !polled {
			// Keep the poll's own schedule: a wake-up neither resets nor advances it.
			switch {
			case next.IsZero():
			case asked:
				// The store's answer is only the first of the due times it knows (a lease
				// that runs out, say, before the sleeps this host left to it): ask again
				// then, or the later ones are lost.
				x.wakeups.askAt(next)
			default:
				x.wakeAt(next)
			}
			continue
		}
		// Armed for a moment, not for a wait worked out from a reading the clock may have
		// moved past meanwhile (clock.Clock).
		now := x.cfg.Clock.Now()
		at := now.Add(x.cfg.PollInterval)
		if !next.IsZero() {
			at = clock.Earlier(at, clock.Later(next, now.Add(time.Millisecond)))
		}
		poll.ResetAt(at)
	}
}

// afterShortClaim takes the store's next due time after a claim that came back short, and
// says when to look again (zero: at the next event). A due time already passed means runs are
// due that the claim did not take: a tenant at its concurrency cap, most often, whose next run
// may be taken only when one of its runs ends or parks, here or on another host. Asking again
// every millisecond (the poll's old floor) was a claim and a question every 3-4 ms for as long
// as the cap held. The claimer now asks after a wait that doubles from 1 ms up to the poll
// interval, and at once when a slot frees here (freeSlot); the first, short waits cover a store
// clock a little ahead of this host's.
func (x *Executor) afterShortClaim(next time.Time) time.Time {
	if next.IsZero() || next.After(x.cfg.Clock.Now()) {
		x.unclaimable.Store(false)
		x.recheck = 0
		return next
	}
	x.unclaimable.Store(true)
	x.recheck = min(max(2*x.recheck, time.Millisecond), x.cfg.PollInterval)
	x.wakeups.askAt(x.cfg.Clock.Now().Add(x.recheck))
	return time.Time{}
}

// claimAvailable claims until there is no more runnable work or no free slot. With
// askNext it returns the next time work becomes claimable, when it knows it (zero otherwise).
func (x *Executor) claimAvailable(ctx context.Context, askNext bool) time.Time {
	for !x.draining() && ctx.Err() == nil {
		// The slots are taken before the claim, so a run started on this host meanwhile
		// cannot leave a claimed run waiting for one with its lease running out.
		free := x.takeFreeSlots()
		if free == 0 {
			// A finishing activation wakes the loop. Set the flag, then look again, so a slot
			// freed in between is either seen here or announced by its activation.
			x.backlog.Store(true)
			x.starved.Store(true)
			if free = x.takeFreeSlots(); free == 0 {
				if askNext {
					// The store is asked for the next due time by the round a freed slot
					// starts: a wake-up left to its answer must not be lost meanwhile.
					x.askNext.Store(true)
				}
				return time.Time{}
			}
			x.starved.Store(false)
		}
		x.releaseUnknownLeases(ctx)
		claims, err := x.cfg.Store.ClaimRuns(ctx, store.ClaimParams{
			Owner: x.cfg.Owner, Limit: free, LeaseFor: x.cfg.LeaseFor, TenantConcurrency: x.cfg.TenantDefaults.Concurrency,
			JournalWindow: x.cfg.JournalWindow,
		})
		for range free - len(claims) {
			<-x.slots
		}
		if err != nil {
			x.acq.failed(err)
			if ctx.Err() == nil {
				x.cfg.Logger.Error("claim runs", "err", err)
			}
			return x.cfg.Clock.Now().Add(time.Second)
		}
		for _, c := range claims {
			x.workers.Add(1)
			if x.handOver(ctx, c, x.slots) {
				continue // the slot and the worker count are the resumed pass's now
			}
			x.execute(ctx, c, x.slots)
		}
		if len(claims) < free {
			x.backlog.Store(false)
			if !askNext {
				return time.Time{}
			}
			at, ok, err := x.cfg.Store.NextWakeup(ctx)
			if err != nil || !ok {
				return time.Time{}
			}
			return at
		}
	}
	return time.Time{}
}

// takeFreeSlots takes every free slot, reserved ones aside (a claim cannot choose whose runs
// it takes), and says how many it took.
func (x *Executor) takeFreeSlots() int {
	for n := 0; ; n++ {
		select {
		case x.slots <- struct{}{}:
		default:
			return n
		}
	}
}

// execute runs a claim in its own goroutine, in a slot (of slots or reserved) and a worker
// count already taken.
func (x *Executor) execute(ctx context.Context, c store.Claim, slot chan struct{}) {
	actx, cancel := context.WithCancelCause(ctx)
	if slot == x.reserved {
		// A quiet tenant's run: its writes do not queue behind the busy ones' (fairness.go).
		actx = store.Urgent(actx)
	}
	a := &activation{runID: c.Run.ID, tenant: c.Run.TenantID, lease: c.Lease, cancel: cancel, slot: slot, cancelAsk: newCancelSignal()}
	x.mu.Lock()
	x.enterLocked(a)
	x.acq.registered(c.Run.ID)
	if x.interrupted {
		cancel(errShutdown)
	}
	missedCancel, missedPause := x.missed.take(c.Run.ID, x.cfg.Clock.Now())
	x.mu.Unlock()
	if missedPause && c.Run.PausedAt == nil {
		// The hold asks the store, so a pause withdrawn since is not held.
		a.pauseAsk.Store(true)
	}
	go func() {
		var ended *store.Run
		if c.Run.CancelGraceUntil != nil {
			x.terminateAtGrace(a, *c.Run.CancelGraceUntil)
		} else if missedCancel {
			// Read the cancel the claim may have missed, now that a notice would reach us.
			x.cancelRequested(c.Run.ID)
		}
		defer func() {
			x.mu.Lock()
			x.exitLocked(a)
			if a.grace != nil {
				a.grace.Stop()
			}
			x.mu.Unlock()
			cancel(nil)
			if a.slot != nil {
				x.freeSlot(a.slot)
			} else {
				x.parking.passes.Done() // it ended parked away from its slot
			}
			// After the slot is free: a caller of StartAndAwait that starts its next run at
			// once finds the slot this one held, and runs it here without queueing.
			if ended != nil {
				x.waiters.notify(ended.ID, ended)
			}
		}()
		ended = x.activate(actx, c, a)
	}()
}

// freeSlot gives back a slot of slots or reserved, and its worker count.
func (x *Executor) freeSlot(slot chan struct{}) {
	<-slot
	x.workers.Done()
	// A free slot matters only if the claimer stopped for want of one, or if runs are due that
	// the last claim could not take (afterShortClaim); otherwise every claim would be followed
	// by a useless one when its run ends.
	if x.starved.CompareAndSwap(true, false) || x.unclaimable.Load() {
		x.wake()
	}
}

// takeSlot takes a slot and a worker count for a run of tenant that is to run on this host
// now (a start, or a parked run's resume), and says which (nil: none, or the engine is not
// running or is draining). An ordinary slot, if one is free and, for a start (behindQueue), no
// runnable run is known to wait for one: the start then goes to the queue, and later starts
// queue behind it. A tenant with nothing in flight here passes that queue, and takes a reserved
// slot when no ordinary one is free (fairness.go), the ordinary ones first so that the reserve
// is kept for when they are all taken. Stop begins under the lock IfRunning holds, before it
// waits for the workers, so a worker is counted here before that wait or not at all.
func (x *Executor) takeSlot(tenant string, behindQueue bool) (life context.Context, slot chan struct{}) {
	x.life.IfRunning(func(ctx context.Context) {
		queued := behindQueue && x.backlog.Load()
		if !queued {
			slot = tryTake(x.slots)
		}
		if slot == nil && x.quietHere(tenant) {
			if queued {
				slot = tryTake(x.slots)
			}
			if slot == nil {
				slot = tryTake(x.reserved)
			}
		}
		switch {
		case slot != nil:
			x.workers.Add(1)
			life = ctx
		case behindQueue:
			x.backlog.Store(true)
		}
	})
	return life, slot
}

// tryTake takes a token of slots if one is free, and says which (nil: none).
func tryTake(slots chan struct{}) chan struct{} {
	select {
	case slots <- struct{}{}:
		return slots
	default:
		return nil
	}
}

// listenLoop turns store notices into wake-ups and cancellations, reconnecting after failures.
func (x *Executor) listenLoop(ctx context.Context) {
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
						x.backlog.Store(true)
						x.wake()
					}
				case store.NoticeCancel:
					x.cancelLocal(n.RunID)
				case store.NoticeCancelRequested:
					x.cancelRequested(n.RunID)
				case store.NoticePauseRequested:
					x.pauseActive(n.RunID)
				}
			}
		}
	}()
	for ctx.Err() == nil {
		err := x.cfg.Store.Listen(ctx, notices)
		if ctx.Err() != nil {
			return
		}
		x.cfg.Logger.Warn("listen for notices; retrying", "err", err)
		x.wake() // a notice may have been missed while disconnected
		select {
		case <-ctx.Done():
			return
		case <-clock.After(x.cfg.Clock, time.Second):
		}
	}
}

// heartbeatLoop renews the leases of running activations, so a long step keeps its run, and
// stops any activation whose lease was lost. It renews the leases of kept hand-backs too, so a
// run waits for its end to be written, not for its lease to run out.
func (x *Executor) heartbeatLoop(ctx context.Context) {
	t := x.cfg.Clock.NewTicker(x.cfg.LeaseFor / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		x.mu.Lock()
		leases := make([]store.Lease, 0, len(x.active))
		for _, a := range x.active {
			leases = append(leases, a.lease)
		}
		x.mu.Unlock()
		kept := x.handBacks.leases()
		leases = append(leases, kept...)
		if len(leases) == 0 {
			continue
		}
		held, err := x.cfg.Store.ExtendLeases(ctx, leases, x.cfg.LeaseFor)
		if err != nil {
			x.cfg.Logger.Warn("extend leases", "err", err)
			continue
		}
		still := make(map[store.Lease]bool, len(held))
		for _, l := range held {
			still[l] = true
		}
		x.mu.Lock()
		for id, a := range x.active {
			if !still[a.lease] && containsLease(leases, a.lease) {
				a.cancel(fmt.Errorf("run %s: %w", id, store.ErrLeaseLost))
			}
		}
		x.mu.Unlock()
		for _, l := range kept {
			if !still[l] {
				x.handBacks.lost(l)
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
