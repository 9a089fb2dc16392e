package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// journal is one activation's hold on its run's journal: the steps it was claimed with, how
// far the pass has replayed them, and every write the activation makes, each fenced by the
// claim's lease, from the first step commit to the run's end or hand-back. It owns the step
// whose commit is held back (RATIONALE.md, "Replay with inline continuation"): hold keeps it,
// flush commits it at the guest's next durable call, finish writes it with the run's end in
// one transaction, interrupt commits it before the run is released, drop forgets it when the
// lease is lost. Only the activation's goroutine uses it.
type journal struct {
	store    store.Store
	lease    store.Lease
	leaseFor time.Duration // how far a commit renews the lease
	// claimed are the entries the pass was claimed (or last resumed) with, from entry base on:
	// a claim reads the journal from the top (base 0) or, for a run with a snapshot, from the
	// snapshot on (snapshots.go); a parked pass's resume only its tail (parking.go). Either
	// reads at most window entries; more says the journal goes on past them, and a replay that
	// reaches the end of claimed reads the next page in their place (page). window is
	// Config.JournalWindow, never 0 once New has put the defaults in.
	claimed []store.Step
	base    int
	more    bool
	window  int
	cursor  int // the journal entry the pass reaches next
	// pending is a finished step whose commit is held back until the guest's next durable
	// call: when that call is the run's end, the step and the end commit together
	// (store.CommitAndFinish). Nothing the guest does in between is observable outside it, so
	// the only difference a crash can make is the one at-least-once steps already allow.
	pending *store.Step
	// snapshot is a snapshot taken at the guest's current call (snapshots.go), written with
	// the held-back step by the flush of that call. snapshotRefused is set when the store
	// refused one: the pass takes no more.
	snapshot        *store.Snapshot
	snapshotRefused bool
	// linked is set once the pass may have started runs linked to this one (children,
	// branches): it reached a child or parallel step, or began past the top of the journal (a
	// snapshot), where it cannot tell. Only such a run's end looks for linked runs to close
	// (closeAtEnd), so a run without any pays nothing for them.
	linked bool
	// guestLog gathers what the pass's guest logs for the run's guest log (guestlog.go): the
	// run's end takes the lines into its own write (finish), so a run that logs costs no
	// statement of its own for them; every other write that lets the run go (a suspension, a
	// pause's hold, a fault, a release) has them written first, on their own (keepLog), so
	// they come before anything the run's next activation logs, on any host. Nil until the
	// pass is made.
	guestLog *runGuestLog
	keepLog  func(ctx context.Context, lines []store.GuestLogLine)
}

// keepGuestLog writes what the pass's guest logged and no write has kept yet: before a write
// that releases the run without ending it, and for what is left when the activation ends.
func (j *journal) keepGuestLog(ctx context.Context) {
	if j.keepLog == nil {
		return
	}
	if lines := j.guestLog.take(); len(lines) > 0 {
		j.keepLog(context.WithoutCancel(ctx), lines)
	}
}

func newJournal(st store.Store, c store.Claim, leaseFor time.Duration, window int) *journal {
	return &journal{store: st, lease: c.Lease, leaseFor: leaseFor, claimed: c.Journal, base: c.JournalFrom, cursor: c.JournalFrom,
		more: c.JournalMore, window: window, linked: c.JournalFrom > 0}
}

// fromTop makes the pass replay the journal from its first entry: a claim that read it from a
// snapshot on reads its first page instead, under the lease.
func (j *journal) fromTop(ctx context.Context) error {
	j.cursor = 0
	if j.base == 0 {
		return nil
	}
	steps, more, err := j.store.JournalPage(ctx, j.lease, 0, j.window)
	if err != nil {
		return err
	}
	j.claimed, j.base, j.more = steps, 0, more
	return nil
}

// page makes sure entry seq is loaded when the journal has it: a replay that runs past the
// entries it was claimed with reads the next page in their place (a replay never looks back).
func (j *journal) page(ctx context.Context, seq int) error {
	for j.more && seq >= j.base+len(j.claimed) {
		from := j.base + len(j.claimed)
		steps, more, err := j.store.JournalPage(ctx, j.lease, from, j.window)
		if err != nil {
			return err
		}
		if len(steps) > 0 && steps[0].Seq != from {
			return fmt.Errorf("the journal's page from entry %d begins at entry %d", from, steps[0].Seq)
		}
		j.claimed, j.base, j.more = steps, from, more && len(steps) > 0
	}
	return nil
}

// reach moves the cursor past the next step and returns its index, with the journal's entry
// there when it has one (nil: the step is new in this pass).
func (j *journal) reach(ctx context.Context) (seq int, claimed *store.Step, err error) {
	seq = j.cursor
	if err := j.page(ctx, seq); err != nil {
		return seq, nil, err
	}
	j.cursor++
	if i := seq - j.base; i >= 0 && i < len(j.claimed) {
		if k := j.claimed[i].Kind; k == store.KindChild || k == store.KindParallel {
			j.linked = true
		}
		return seq, &j.claimed[i], nil
	}
	return seq, nil, nil
}

// replaying reports whether the journal has an entry at the cursor: the pass is replaying,
// not making new progress.
func (j *journal) replaying() bool { return j.more || j.cursor < j.base+len(j.claimed) }

// resume takes up a parked pass's journal again at entry seq, which it suspended at, with
// the claim that resumed it: its lease, and the journal from seq on.
func (j *journal) resume(c *store.Claim, seq int) {
	j.lease, j.claimed, j.base, j.cursor, j.more = c.Lease, c.Journal, seq, seq, c.JournalMore
}

// last reports whether seq is the journal's last entry: a wait there that is already
// resolved was resolved while the run was suspended.
func (j *journal) last(seq int) bool { return !j.more && seq == j.base+len(j.claimed)-1 }

// unreached is the first journal entry the pass did not reach (nil when it reached them all),
// and how many it reached: a workflow that finishes before it replayed its whole journal is
// nondeterministic.
func (j *journal) unreached(ctx context.Context) (next *store.Step, reached int, err error) {
	if err := j.page(ctx, j.cursor); err != nil {
		return nil, j.cursor, err
	}
	if i := j.cursor - j.base; i >= 0 && i < len(j.claimed) {
		return &j.claimed[i], j.cursor, nil
	}
	return nil, j.cursor, nil
}

// hold keeps a finished step to commit at the guest's next durable call.
func (j *journal) hold(row store.Step) { j.pending = &row }

// flush commits the held-back step, before the guest's next durable call.
func (j *journal) flush(ctx context.Context) error {
	if j.snapshot != nil {
		snap, held := *j.snapshot, j.pending
		j.snapshot, j.pending = nil, nil
		err := j.store.SaveSnapshot(ctx, j.lease, held, snap, j.leaseFor)
		if !errors.Is(err, store.ErrRefused) {
			return err
		}
		// A snapshot the store cannot keep changes nothing the run does: the step goes alone.
		j.snapshotRefused = true
		if held == nil {
			return nil
		}
		j.pending = held
	}
	if j.pending == nil {
		return nil
	}
	row := *j.pending
	j.pending = nil
	return j.commit(ctx, row)
}

// commit writes a step now (a sleep marked elapsed, one that needs no wait).
func (j *journal) commit(ctx context.Context, row store.Step) error {
	return j.store.CommitStep(ctx, j.lease, row, j.leaseFor)
}

// suspend releases the run until wakeAt (nil: until an event), journaling row first if given,
// and the held-back step with it: a sleep right after a step commits both in the suspension's
// one transaction.
func (j *journal) suspend(ctx context.Context, row *store.Step, wakeAt *time.Time) error {
	j.keepGuestLog(ctx)
	if j.pending != nil && row != nil {
		held := *j.pending
		j.pending = nil
		return j.store.CommitAndSuspend(ctx, j.lease, held, *row, wakeAt)
	}
	if err := j.flush(ctx); err != nil {
		return err
	}
	return j.store.Suspend(ctx, j.lease, row, wakeAt)
}

// reachWait journals a wait the pass reaches for the first time and returns it resolved, or
// nil when the store parked the run on it. The guest's lines are kept first, as the run may
// be let go: when the wait is resolved already, that is a statement an end would have saved.
func (j *journal) reachWait(ctx context.Context, row store.Step) (*store.Step, error) {
	j.keepGuestLog(ctx)
	return j.store.ReachWait(ctx, j.lease, row, j.leaseFor)
}

// startChild starts a child run for step row, with the held-back step (store.StartChild).
func (j *journal) startChild(ctx context.Context, row store.Step, child store.NewRun, link store.ChildLink) (store.Step, string, error) {
	if j.snapshot != nil {
		if err := j.flush(ctx); err != nil {
			return store.Step{}, "", err
		}
	}
	held := j.pending
	j.pending, j.linked = nil, true
	return j.store.StartChild(ctx, j.lease, held, row, child, link, j.leaseFor)
}

// fork forks a parallel step's branches (store.Store.ForkBranches), its held-back step written
// with it, and returns the branches' run ids.
func (j *journal) fork(ctx context.Context, row store.Step, f store.Fork) ([]string, error) {
	if j.snapshot != nil {
		if err := j.flush(ctx); err != nil {
			return nil, err
		}
	}
	held := j.pending
	j.pending, j.linked = nil, true
	_, ids, err := j.store.ForkBranches(ctx, j.lease, held, row, f, j.leaseFor)
	return ids, err
}

// parkWait parks the run on a wait journaled before, or returns it resolved meanwhile.
func (j *journal) parkWait(ctx context.Context, key string, timeout *time.Time) (*store.Step, error) {
	j.keepGuestLog(ctx)
	return j.store.ParkWait(ctx, j.lease, key, timeout, j.leaseFor)
}

// timeoutWait times a wait out at at, unless an event resolved it first.
func (j *journal) timeoutWait(ctx context.Context, key string, at time.Time) (store.Step, error) {
	return j.store.TimeoutWait(ctx, j.lease, key, at, j.leaseFor)
}

// runEnd is a run's end as it is to be written.
type runEnd struct {
	last   *store.Step
	status store.RunStatus
	output []byte
	info   *abi.ErrorInfo
	// next, when set, is the run that continues this one (continuation.go), created with the
	// end; continuedAs is its id once written.
	next        *store.NewRun
	continuedAs string
	continued   store.Run // the run next became, once written: its start is observed (observer.go)
	// guestLog is what the guest logged that the run's guest log has not yet kept, written
	// with the end (store.Store.Finish).
	guestLog []store.GuestLogLine
}

// finish writes the run's end, with the held-back step when there is one and the lines the
// guest logged, and leaves end as written (see writeEnd), to be written again with writeEnd if
// the store did not take it.
func (j *journal) finish(ctx context.Context, end *runEnd) error {
	end.last = j.pending
	j.pending = nil
	end.guestLog = j.guestLog.take()
	return j.writeEnd(ctx, end)
}

// writeEnd writes end. When the store refuses it (the output or the last step holds a value it
// cannot keep), writing it again would fail again: end becomes the run's failure with code
// store_refused, written without the refused values.
func (j *journal) writeEnd(ctx context.Context, end *runEnd) error {
	var err error
	switch {
	case end.next != nil:
		var next store.Run
		next, err = j.store.FinishAndContinue(ctx, j.lease, end.last, end.status, end.output, end.info, *end.next, end.guestLog)
		if err == nil {
			end.continuedAs, end.continued = next.ID, next
		}
	case end.last != nil:
		err = j.store.CommitAndFinish(ctx, j.lease, *end.last, end.status, end.output, end.info, end.guestLog)
	default:
		err = j.store.Finish(ctx, j.lease, end.status, end.output, end.info, end.guestLog)
	}
	if errors.Is(err, store.ErrRefused) && (end.last != nil || end.info == nil || end.info.Code != abi.CodeStoreRefused) {
		// The guest's lines are storable as the host hands them over (ABI.md §4.9): they go
		// with the failure, which is when they are wanted most.
		*end = runEnd{status: store.StatusFailed, info: refusedInfo("the run's end", err), guestLog: end.guestLog}
		err = j.store.Finish(ctx, j.lease, end.status, nil, end.info, end.guestLog)
	}
	return err
}

// refusedInfo is the failure of a run whose write (what) the store refused with err.
func refusedInfo(what string, err error) *abi.ErrorInfo {
	info := abi.ErrorInfo{Code: abi.CodeStoreRefused, Message: "the store refused to keep " + what + ": " + err.Error()}.Storable()
	return &info
}

// interrupt commits the held-back step of a pass that is being stopped (a shutdown), so the
// host that takes the run next does not run its callback again; the run is released after.
func (j *journal) interrupt(ctx context.Context) error { return j.flush(ctx) }

// drop forgets the held-back step of a pass whose lease is lost or whose run was cancelled:
// no write of it can land.
func (j *journal) drop() { j.pending, j.snapshot = nil, nil }

// holdPaused holds the run paused (store.Store.HoldPaused), writing row, or the held-back step
// when row is nil; the guest's lines are kept first, as for every write that lets the run go.
// Unless always, a pause withdrawn meanwhile is not held: nothing is written and the held-back
// step stays held back (false).
func (j *journal) holdPaused(ctx context.Context, row *store.Step, always bool) (bool, error) {
	if row != nil {
		if err := j.flush(ctx); err != nil {
			return false, err
		}
	} else {
		row = j.pending
	}
	// A snapshot taken at this call is dropped: the resume replays, which a snapshot only
	// shortens, and the hold stays one write.
	j.snapshot = nil
	j.keepGuestLog(ctx)
	held, err := j.store.HoldPaused(ctx, j.lease, row, always)
	if err == nil && held && row == j.pending {
		j.pending = nil
	}
	return held, err
}

// release hands the run back for any host to take at once.
func (j *journal) release(ctx context.Context) error {
	j.keepGuestLog(ctx)
	return j.store.Release(ctx, j.lease)
}

// fault hands the run back after a fault, claimable again at at, counting the fault with its
// reason (store.Store.Fault).
func (j *journal) fault(ctx context.Context, reason string, at time.Time) error {
	j.keepGuestLog(ctx)
	return j.store.Fault(ctx, j.lease, reason, at)
}
