package engine

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// Parked instances. A pass whose durable call suspends its run (a sleep, a wait no event has
// resolved, a step in its retry backoff) used to unwind its guest, and the run's next
// activation replayed the whole journal on a reset instance: O(S) per wake-up, O(S²) per run.
// Now, once the suspension is durable (the run released, its due time or its wait written),
// the pass can stay where it is instead, its guest blocked in the host call (host.Park), while
// this host expects to resume it: within Config.ParkMemory, least recently parked first out,
// and only for a wake-up within Config.ParkHorizon or a wait for an event (which may come at
// any time, whatever the wait's timeout). When the run is due again this host leases it by id
// with only the journal's tail (store.ResumeRun), and the pass makes the same call again on
// that journal, exactly as a replay reaching it would: the call reads the entry it suspended
// at and returns what it holds. Nothing else changes: the suspension was durable and the lease
// released, so an eviction, a crash, a redeploy, a cancel or another host claiming the run
// leave the run to the ordinary path, a replay; parking never decides what a run does, only
// how much a wake-up costs.
//
// Who resumes a parked pass: its own timer at its due time (resumeParked), or the claimer,
// when a claim returns a run parked here (a signal, a wake-up another host announced, a timer
// that found every slot taken), which hands the claim to the pass instead of starting an
// activation (handOver). Whichever comes first takes the pass out of the table, so exactly one
// of them acts. A signal goes through the claimer, not a resume of its own: claims of a dozen
// runs at a time cost Postgres less per run than one resume per signal (10,000 signals: 0.63-
// 0.78 ms of Postgres CPU each through claims, 1.08-1.82 ms resumed one by one, 0.62 ms with
// no parking at all; engine/RATIONALE.md, "Parked instances").
//
// A retry backoff reached in step_done (the attempt that just failed) does not park: the
// guest is inside its step and only a new step_run can begin the next attempt (ABI.md §4.5),
// so that run unwinds and replays as before. One reached in step_run (a replay finding the
// backoff not over) parks like a sleep.

// parked is one pass waiting in the table.
type parked struct {
	runID  string
	digest string    // the module the pass runs: a run redeployed since is not resumed
	seq    int       // the journal entry the pass suspended at
	key    string    // its key, checked against the entry the resume reads
	wakeAt time.Time // zero: only an event wakes it
	cost   uint64
	elem   *list.Element
	timer  clock.Timer
	// refusals counts the resumes the store refused (resumeParked). Two resumers of one pass
	// at once (its timer and a signal) may both count: the bound is then reached sooner.
	refusals atomic.Int32
	// out receives the pass's fate once: a claim to go on with, or nil when it is evicted.
	out    chan *store.Claim
	tenant string
	// slot is the slots channel whose token the resumer took for the pass, set before the
	// claim is sent on out.
	slot chan struct{}
}

// parking is the table of parked passes. Safe for concurrent use.
type parking struct {
	budget uint64
	mu     sync.Mutex
	used   uint64
	byRun  map[string]*parked
	lru    list.List // front: parked most recently
	closed bool
	// passes counts the goroutines of passes parked away from their slot (execute): Stop
	// waits for them after it has evicted them all.
	passes sync.WaitGroup
}

func newParking(budget uint64) *parking {
	return &parking{budget: budget, byRun: make(map[string]*parked)}
}

// admit puts pk in the table, evicting the least recently parked passes to make room, and an
// older pass of the same run (a later activation of the run parking is the one that goes on);
// it returns those, for the caller to tell, and false (evicting nothing) when pk cannot be
// parked: over the whole budget, or the table closed.
func (t *parking) admit(pk *parked) (superseded *parked, evicted []*parked, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || pk.cost > t.budget {
		return nil, nil, false
	}
	if superseded = t.byRun[pk.runID]; superseded != nil {
		t.removeLocked(superseded)
	}
	for t.used+pk.cost > t.budget {
		old := t.lru.Back().Value.(*parked)
		t.removeLocked(old)
		evicted = append(evicted, old)
	}
	pk.elem = t.lru.PushFront(pk)
	t.byRun[pk.runID] = pk
	t.used += pk.cost
	t.passes.Add(1)
	return superseded, evicted, true
}

// take removes the pass parked for runID and returns it (nil: none). With only set, it takes
// that pass only: a timer set for one park of a run must not take a later one.
func (t *parking) take(runID string, only *parked) *parked {
	t.mu.Lock()
	defer t.mu.Unlock()
	pk := t.byRun[runID]
	if pk == nil || only != nil && pk != only {
		return nil
	}
	t.removeLocked(pk)
	return pk
}

func (t *parking) removeLocked(pk *parked) {
	t.lru.Remove(pk.elem)
	delete(t.byRun, pk.runID)
	t.used -= pk.cost
	if pk.timer != nil {
		pk.timer.Stop()
	}
}

// close empties the table and refuses every later admit; it returns what it held.
func (t *parking) close() []*parked {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	out := make([]*parked, 0, len(t.byRun))
	for _, pk := range t.byRun {
		t.removeLocked(pk)
		out = append(out, pk)
	}
	return out
}

// stats is how many passes are parked and what they cost.
func (t *parking) stats() (n int, bytes uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byRun), t.used
}

// parkedNow is the pass parked for runID (only that one, with only set), left in the table.
func (t *parking) parkedNow(runID string, only *parked) *parked {
	t.mu.Lock()
	defer t.mu.Unlock()
	pk := t.byRun[runID]
	if pk == nil || only != nil && pk != only {
		return nil
	}
	return pk
}

// resumeRetry and maxResumeRefusals: a refused resume is tried again after 2, 4 and 8 ms
// before the pass is evicted.
const (
	resumeRetry       = time.Millisecond
	maxResumeRefusals = 3
)

// setTimer arms pk's wake-up (or a refused resume's retry), unless pk has left the table.
func (t *parking) setTimer(pk *parked, arm func() clock.Timer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byRun[pk.runID] == pk {
		pk.timer = arm()
	}
}

// errNotParked is what a pass's park returns when the pass was not kept: it unwinds.
var errNotParked = errors.New("not parked")

// parkPass keeps the pass p, whose durable call just suspended its run (susp, at journal
// entry seq), parked until the run may go on, and returns the claim it goes on with; false:
// the pass was not parked, or was evicted, and unwinds. It runs on the activation's
// goroutine, inside the host call (host.Park).
func (x *Executor) parkPass(ctx context.Context, p *pass, seq int, susp *suspended) (*store.Claim, bool) {
	if x.parking == nil || p.act == nil || x.draining() {
		return nil, false
	}
	if !susp.event && susp.wakeAt.Sub(x.cfg.Clock.Now()) > x.cfg.ParkHorizon {
		return nil, false // not expected back soon: its memory is better spent on others
	}
	var resumed *store.Claim
	var pk *parked
	err := host.Park(ctx, func(cost uint64) error {
		pk = &parked{
			runID: p.run.ID, tenant: p.run.TenantID, digest: p.run.Digest, seq: seq, key: susp.step,
			wakeAt: susp.wakeAt, cost: cost, out: make(chan *store.Claim, 1),
		}
		x.mu.Lock()
		taken := x.active[pk.runID] != p.act
		x.mu.Unlock()
		if taken {
			// Its run was claimed again here between the suspension and now (a signal just
			// after the wait was written): that activation has it.
			return errNotParked
		}
		superseded, evicted, ok := x.parking.admit(pk)
		if superseded != nil {
			x.evict([]*parked{superseded}, "superseded")
		}
		x.evict(evicted, "memory")
		if !ok {
			return errNotParked
		}
		x.obs.parked()
		if p.cancelPending() {
			// A cancel the workflow has not seen came after its last call: the suspension
			// left the run claimable now (store.Store.Suspend), and the claim that takes it
			// hands this pass the cancel.
			x.wake()
		}
		p.obs.ended("parked", susp)
		p.obs = nil
		x.leaveSlot(p.act)
		if !pk.wakeAt.IsZero() {
			x.parking.setTimer(pk, func() clock.Timer {
				return x.cfg.Clock.AfterFuncAt(pk.wakeAt, func() { x.resumeParked(pk.runID, pk, "timer") })
			})
		}
		select {
		case c := <-pk.out:
			resumed = c
		case <-ctx.Done():
			// Cancelled or stopped while parked. Taken out of the table here, it unwinds; taken
			// by a resumer or an eviction just now, it gets what they send (a claim it cannot
			// use now is then released or dropped by the ordinary end of an interrupted pass).
			if x.parking.take(pk.runID, pk) == nil {
				resumed = <-pk.out
			}
		}
		if resumed == nil {
			return errNotParked
		}
		return nil
	})
	if err != nil || resumed == nil {
		return nil, false
	}
	x.rejoin(p.act, resumed, pk.slot)
	_, p.obs = x.obs.claimed(ctx, resumed.Run)
	if e := resumed.Journal[0]; e.Kind == store.KindSleep && e.Status == store.StepCompleted && !susp.wakeAt.IsZero() {
		// The resume marked the sleep elapsed (store.ResumeRun): the pass will not.
		p.obs.timerDue("sleep", susp.wakeAt, x.cfg.Clock.Now())
	}
	return resumed, true
}

// leaveSlot is a pass parking: its slot and its place among the workers and the active
// activations are free for others until it is resumed.
func (x *Executor) leaveSlot(a *activation) {
	x.mu.Lock()
	x.exitLocked(a)
	x.mu.Unlock()
	slot := a.slot
	a.slot = nil
	x.freeSlot(slot)
}

// rejoin is a parked pass resumed with claim c, in slot and a worker count its resumer took:
// it is an active activation again, under its new lease.
func (x *Executor) rejoin(a *activation, c *store.Claim, slot chan struct{}) {
	x.mu.Lock()
	a.lease = c.Lease
	a.slot = slot
	x.enterLocked(a)
	if x.interrupted {
		a.cancel(errShutdown)
	}
	x.mu.Unlock()
	x.parking.passes.Done()
}

// resumeParked resumes the pass parked for runID (only that one, with only set), whose due
// time has come (by, for the metric): in a free slot, with the run leased by id and
// the journal's tail (store.ResumeRun). With no slot free it stays parked and the claimer,
// woken, takes the run when one frees and hands it over (handOver). The pass stays in the
// table while the store is asked, so a claim of its run made meanwhile still finds it; it is
// taken out only once the lease is this resume's. A refusal (not due by the store's clock, the
// tenant at its cap, the run taken by another host or cancelled) is tried again after 2, 4 and
// 8 ms, a store clock a little behind this host's costing those and not a replay; then the
// pass is evicted and the claimer's ordinary path has the run.
func (x *Executor) resumeParked(runID string, only *parked, by string) {
	pk := x.parking.parkedNow(runID, only)
	if pk == nil {
		return
	}
	// A parked run that is due is part of any backlog: its resume does not queue behind it.
	life, slot := x.takeSlot(pk.tenant, false)
	if slot == nil {
		x.wake()
		return
	}
	c, ok, err := x.cfg.Store.ResumeRun(life, store.ResumeParams{
		JournalWindow: x.cfg.JournalWindow,
		RunID:         runID, Owner: x.cfg.Owner, LeaseFor: x.cfg.LeaseFor,
		TenantConcurrency: x.cfg.TenantDefaults.Concurrency, FromSeq: pk.seq,
	})
	if err != nil {
		x.acq.failed(err)
		x.cfg.Logger.Warn("resume a parked run; leaving it to a claim", "run", runID, "err", err)
	}
	if err != nil || !ok {
		x.freeSlot(slot)
		if n := pk.refusals.Add(1); err == nil && n <= maxResumeRefusals {
			x.parking.setTimer(pk, func() clock.Timer {
				return x.cfg.Clock.AfterFunc(resumeRetry<<n, func() { x.resumeParked(runID, pk, by) })
			})
			return
		}
		if x.parking.take(runID, pk) != nil {
			x.evict([]*parked{pk}, "not_resumable")
			x.wake()
		}
		return
	}
	took := x.parking.take(runID, pk) != nil
	if !took || !pk.accepts(c.Run, c.Journal) {
		// The pass left the table meanwhile (evicted, cancelled, Stop), or the run moved on
		// without it (another host ran it, or it was redeployed): hand the run back at once
		// for an ordinary activation. A pass this resume took out of the table is evicted
		// here: nobody else can reach it any more, and left waiting it would hold Stop.
		if err := x.cfg.Store.Release(life, c.Lease); err != nil {
			x.cfg.Logger.Warn("hand back a run its parked pass cannot take", "run", runID, "err", err)
		}
		x.freeSlot(slot)
		if took {
			x.evict([]*parked{pk}, "not_resumable")
		}
		x.wake()
		return
	}
	pk.slot = slot
	pk.out <- &c
	x.obs.resumed(by)
}

// accepts says whether a claim of run with journal (from the parked entry on) continues the
// pass: the same module, and the journal still ends at the entry the pass suspended at.
func (pk *parked) accepts(run store.Run, journal []store.Step) bool {
	return run.Digest == pk.digest && len(journal) == 1 && journal[0].Seq == pk.seq && journal[0].Key == pk.key
}

// handOver gives a claim the claimer made to the pass parked for its run, if there is one
// that it continues, and says whether it did. A pass it does not continue is evicted, and the
// claim becomes an ordinary activation.
func (x *Executor) handOver(ctx context.Context, c store.Claim, slot chan struct{}) bool {
	if x.parking == nil {
		return false
	}
	pk := x.parking.take(c.Run.ID, nil)
	if pk == nil {
		return false
	}
	if pk.seq >= c.JournalFrom+len(c.Journal) && c.JournalMore {
		// The parked entry is past the claim's window: its page is read here, so a long
		// journal without a snapshot still hands its run over rather than replaying it.
		if steps, more, err := x.cfg.Store.JournalPage(ctx, c.Lease, pk.seq, x.cfg.JournalWindow); err == nil {
			c.Journal, c.JournalFrom, c.JournalMore = steps, pk.seq, more
		}
	}
	// The claim's journal starts at entry JournalFrom (0, or its snapshot's).
	if i := pk.seq - c.JournalFrom; i >= 0 && i < len(c.Journal) && !c.JournalMore && pk.accepts(c.Run, c.Journal[i:]) {
		c.Journal, c.JournalFrom, c.Snapshot = c.Journal[i:], pk.seq, nil
		pk.slot = slot
		pk.out <- &c
		x.obs.resumed("claim")
		return true
	}
	x.evict([]*parked{pk}, "not_resumable")
	return false
}

// evict tells passes taken out of the table that they are not resumed: each unwinds, and the
// run waits for the claimer. reason labels the metric.
func (x *Executor) evict(pks []*parked, reason string) {
	for _, pk := range pks {
		x.obs.evicted(reason)
		pk.out <- nil
		if !pk.wakeAt.IsZero() && reason != "shutdown" {
			x.wakeAt(pk.wakeAt)
		}
	}
}

// unpark evicts the pass parked for runID, if any (its run was cancelled).
func (x *Executor) unpark(runID, reason string) {
	if x.parking == nil {
		return
	}
	if pk := x.parking.take(runID, nil); pk != nil {
		x.evict([]*parked{pk}, reason)
	}
}

// closeParking evicts every parked pass (Stop) and waits for them to unwind.
func (x *Executor) closeParking() {
	if x.parking == nil {
		return
	}
	x.evict(x.parking.close(), "shutdown")
	x.parking.passes.Wait()
}
