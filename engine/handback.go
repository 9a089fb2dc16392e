package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// Hand-backs. The write that ends an activation (its result, a fault hand-back, a shutdown's
// release) is the one a store outage hits hardest: the activation is over, and if the write is
// simply dropped the run stays leased to this host until its lease runs out (30 s by default)
// although the store may be back a second later. So the engine keeps each such write it could
// not make, with its lease, and tries it again with a short backoff until it lands or the
// lease is found lost; the heartbeat renews those leases meanwhile. A store that is down for
// all of them is probed by one write per round, not one per run.

const (
	// handBackFirstRetry and handBackMaxRetry bound the backoff between tries of a kept write:
	// short, because the store is usually back within a second of a restart or a failover.
	handBackFirstRetry = 100 * time.Millisecond
	handBackMaxRetry   = 500 * time.Millisecond
	// handBackTries bounds the tries of a write that fails for a reason other than the store
	// being unavailable: that is likely to fail again, and the lease running out leaves the
	// run to the fault count (Config.FaultLimit) instead.
	handBackTries = 3
	// handBackTimeout bounds one try.
	handBackTimeout = 5 * time.Second
)

// handBack is one write that ends an activation, kept until it lands.
type handBack struct {
	lease store.Lease
	what  string // for logs: "record the run's result", "hand the faulted run back", ...
	write func(ctx context.Context) error
	// landed runs once the write has landed (a finished run's waiters, a wake-up); lost, when
	// set, once it is known never to land (the lease is gone, or the tries ran out).
	landed func()
	lost   func()
	tries  int
	delay  time.Duration
	next   time.Time
}

// handBacks keeps the writes that could not be made, by run id. Safe for concurrent use.
type handBacks struct {
	store store.Store
	log   *slog.Logger
	clock clock.Clock

	mu      sync.Mutex
	pending map[string]*handBack
	wakeCh  chan struct{} // capacity 1
	// roundMu makes rounds one at a time (the loop's and Stop's), so no write is made twice.
	roundMu sync.Mutex
}

func newHandBacks(st store.Store, log *slog.Logger, clk clock.Clock) *handBacks {
	return &handBacks{store: st, log: log, clock: clk, pending: make(map[string]*handBack), wakeCh: make(chan struct{}, 1)}
}

// keep takes over a write that failed with err, to try it again shortly.
func (h *handBacks) keep(hb *handBack, err error) {
	hb.tries, hb.delay = 1, handBackFirstRetry
	hb.next = h.clock.Now().Add(hb.delay)
	h.log.Warn(hb.what+": the store did not take it; trying again shortly", "run", hb.lease.RunID, "err", err)
	h.mu.Lock()
	h.pending[hb.lease.RunID] = hb
	h.mu.Unlock()
	select {
	case h.wakeCh <- struct{}{}:
	default:
	}
}

// leases are the leases of the kept writes, for the heartbeat to renew.
func (h *handBacks) leases() []store.Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]store.Lease, 0, len(h.pending))
	for _, hb := range h.pending {
		out = append(out, hb.lease)
	}
	return out
}

// lost drops the write of a lease the heartbeat found lost: another host holds the run now,
// or it ended.
func (h *handBacks) lost(l store.Lease) {
	h.mu.Lock()
	if hb := h.pending[l.RunID]; hb != nil && hb.lease == l {
		delete(h.pending, l.RunID)
	}
	h.mu.Unlock()
}

// loop tries the kept writes as they come due, until ctx ends.
func (h *handBacks) loop(ctx context.Context) {
	t := h.clock.NewTimer(handBackMaxRetry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wakeCh:
		case <-t.C():
		}
		h.round(ctx, false)
		t.ResetAt(h.nextDue())
	}
}

// nextDue is when the next kept write is due (in handBackMaxRetry at the latest).
func (h *handBacks) nextDue() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock.Now()
	next := now.Add(handBackMaxRetry)
	for _, hb := range h.pending {
		next = clock.Earlier(next, clock.Later(hb.next, now.Add(time.Millisecond)))
	}
	return next
}

// round tries every kept write that is due (all of them with force). When one finds the store
// unavailable, the others due wait for the next round.
func (h *handBacks) round(ctx context.Context, force bool) {
	h.roundMu.Lock()
	defer h.roundMu.Unlock()
	h.mu.Lock()
	var due []*handBack
	now := h.clock.Now()
	for _, hb := range h.pending {
		if force || !hb.next.After(now) {
			due = append(due, hb)
		}
	}
	h.mu.Unlock()
	for i, hb := range due {
		if ctx.Err() != nil {
			return
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handBackTimeout)
		err := hb.write(wctx)
		cancel()
		switch {
		case err == nil:
			h.done(hb)
			h.log.Info(hb.what+": done after the store came back", "run", hb.lease.RunID, "tries", hb.tries+1)
			if hb.landed != nil {
				hb.landed()
			}
		case errors.Is(err, store.ErrLeaseLost):
			h.done(hb)
			h.log.Info(hb.what+": the run was taken over or ended meanwhile", "run", hb.lease.RunID)
			if hb.lost != nil {
				hb.lost()
			}
		case errors.Is(err, store.ErrUnavailable):
			// The store is still away: one probe per round is enough.
			for _, rest := range due[i:] {
				h.backOff(rest)
			}
			return
		default:
			if h.backOff(hb) > handBackTries {
				h.done(hb)
				h.log.Error(hb.what+": giving up; the lease will run out instead", "run", hb.lease.RunID, "err", err)
				if hb.lost != nil {
					hb.lost()
				}
			}
		}
	}
}

// backOff schedules hb's next try and returns how many tries it has had.
func (h *handBacks) backOff(hb *handBack) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	hb.tries++
	hb.delay = min(2*hb.delay, handBackMaxRetry)
	hb.next = h.clock.Now().Add(hb.delay)
	return hb.tries
}

func (h *handBacks) done(hb *handBack) {
	h.mu.Lock()
	if h.pending[hb.lease.RunID] == hb {
		delete(h.pending, hb.lease.RunID)
	}
	h.mu.Unlock()
}

// count is how many writes are kept.
func (h *handBacks) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.pending)
}

// Leases the engine may hold without knowing. A claim or a start whose answer is lost with the
// connection (the store committed, the reply never came) leaves runs leased to this host that
// no activation runs; they would wait for their leases to run out. After such a failure the
// claimer, before its next claim, hands back every lease of this host that it does not know
// (store.ReleaseOwned).

// acquisitions tracks the leases starts create, from the store's answer to the activation's
// registration, so that handing back unknown leases never takes one of them. Safe for
// concurrent use.
type acquisitions struct {
	// mu is held shared by each start's create-and-record, alone while unknown leases are
	// handed back.
	mu        sync.RWMutex
	pendingMu sync.Mutex
	pending   map[string]bool // runs created leased to this host whose activation has not registered
	// unsure is set when a claim or a start failed without saying whether the store acted.
	unsure atomic.Bool
}

func newAcquisitions() *acquisitions { return &acquisitions{pending: make(map[string]bool)} }

func (a *acquisitions) add(runID string) {
	a.pendingMu.Lock()
	a.pending[runID] = true
	a.pendingMu.Unlock()
}

// registered is called once the activation of runID is known to the engine.
func (a *acquisitions) registered(runID string) {
	a.pendingMu.Lock()
	delete(a.pending, runID)
	a.pendingMu.Unlock()
}

func (a *acquisitions) pendingRuns() []string {
	a.pendingMu.Lock()
	defer a.pendingMu.Unlock()
	out := make([]string, 0, len(a.pending))
	for id := range a.pending {
		out = append(out, id)
	}
	return out
}

// failed notes a claim or a start that failed with err: unless the store said what it did
// (refused it, found nothing, a conflict, a limit), it may have leased runs nobody heard of.
func (a *acquisitions) failed(err error) {
	for _, known := range []error{store.ErrRefused, store.ErrNotFound, store.ErrConflict, store.ErrLimit} {
		if errors.Is(err, known) {
			return
		}
	}
	a.unsure.Store(true)
}

// releaseUnknownLeases hands back the leases this host holds but does not know of, once after
// a claim or a start failed that way.
func (x *Executor) releaseUnknownLeases(ctx context.Context) {
	if !x.acq.unsure.Load() {
		return
	}
	x.acq.mu.Lock()
	defer x.acq.mu.Unlock()
	x.acq.unsure.Store(false)
	keep := x.acq.pendingRuns()
	x.mu.Lock()
	for id := range x.active {
		keep = append(keep, id)
	}
	x.mu.Unlock()
	for _, l := range x.handBacks.leases() {
		keep = append(keep, l.RunID)
	}
	n, err := x.cfg.Store.ReleaseOwned(ctx, x.cfg.Owner, keep)
	if err != nil {
		x.acq.unsure.Store(true)
		x.cfg.Logger.Debug("hand back leases this host may hold without knowing; trying again", "err", err)
		return
	}
	if n > 0 {
		x.cfg.Logger.Warn("handed back leases this host got without hearing of them (a claim or a start whose answer was lost)", "runs", n)
	}
}
