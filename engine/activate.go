package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// activate runs one pass of a claimed run and records how it ended. Every write is fenced by
// the claim's lease (the pass's journal holds it), so a host that lost the run can never
// overwrite the one that took it. It returns the run as it ended when this pass recorded its
// end, for the caller to hand to AwaitRun's waiters once the activation's slot is free.
func (x *Executor) activate(ctx context.Context, c store.Claim, act *activation) (ended *store.Run) {
	log := x.cfg.Logger.With("tenant", c.Run.TenantID, "workflow", c.Run.Workflow, "run", c.Run.ID)
	if id, ok := x.obs.traceID(c.Run.ID); ok {
		// The run's trace id is derived from its id: its log records and spans find each other.
		log = log.With("trace_id", id)
	}
	// Writes after the guest stops must outlive a cancelled activation context (a shutdown
	// releases the lease; a cancel must not leave a half-written row), so they use this one.
	wctx := context.WithoutCancel(ctx)
	j := newJournal(x.cfg.Store, c, x.cfg.LeaseFor, x.cfg.JournalWindow)

	if c.Faults >= x.cfg.FaultLimit {
		// Activated this often in a row without progress, the run is not going to make any.
		return x.finish(wctx, log, c.Run, j, store.StatusFailed, nil, &abi.ErrorInfo{
			Code: abi.CodeNoProgress,
			Message: abi.StorableText(fmt.Sprintf("the run was activated %d times in a row without journal progress; the last fault: %s",
				c.Faults, c.LastFault)),
		})
	}
	if held, err := x.holdClaimed(wctx, log, c); held || err != nil {
		if err != nil && !errors.Is(err, store.ErrLeaseLost) {
			return x.fault(wctx, log, c.Run, j, c.Faults, fmt.Errorf("hold the run paused: %w", err))
		}
		return nil
	}
	// Stopped while the limits or the module load (a shutdown, a cancel): the failure is not
	// the run's, and a shutdown must not count as a fault (TestGracefulShutdownIsNoFault).
	limits, err := x.limits.get(ctx, c.Run.TenantID)
	if err != nil && ctx.Err() != nil {
		x.stopped(ctx, wctx, log, j)
		return nil
	}
	if err != nil {
		return x.fault(wctx, log, c.Run, j, c.Faults, fmt.Errorf("read the tenant's limits: %w", err))
	}
	mod, err := x.modules.get(ctx, c.Run.TenantID, c.Run.Digest)
	if err != nil && ctx.Err() != nil {
		x.stopped(ctx, wctx, log, j)
		return nil
	}
	if err != nil {
		if errors.Is(err, host.ErrInvalidModule) {
			return x.finish(wctx, log, c.Run, j, store.StatusFailed, nil, &abi.ErrorInfo{Code: abi.CodeABIViolation, Message: err.Error()})
		}
		if errors.Is(err, store.ErrNotFound) {
			return x.finish(wctx, log, c.Run, j, store.StatusFailed, nil, &abi.ErrorInfo{Code: abi.CodeABIViolation, Message: "the run's module is gone: " + err.Error()})
		}
		return x.fault(wctx, log, c.Run, j, c.Faults, fmt.Errorf("load the run's module: %w", err))
	}
	retry := abi.DefaultRetry()
	for _, w := range mod.Description.Workflows {
		if w.Name == c.Run.Workflow && w.Version == c.Run.Version && w.Retry != nil {
			retry = w.Retry.Merge(abi.DefaultRetry())
		}
	}
	if r := c.Run.Retry; r != nil && r.OnExhausted != "" {
		// The run's own policy says what its steps do when their attempts run out, over the
		// workflow's; a step's own options still win (pause.go).
		retry.OnExhausted = r.OnExhausted
	}
	ctx, obs := x.obs.claimed(ctx, c.Run)
	p := &pass{
		run: c.Run, j: j, obs: obs, retry: retry, maxSteps: limits.MaxStepsPerRun,
		seen: make(map[string]int), clock: c.Run.CreatedAt, log: log, caps: x.capabilities(),
		clk: x.cfg.Clock, rand: x.cfg.Rand, act: act, handlesCancel: mod.Description.Has(abi.FeatureCancel),
	}
	if x.parking != nil {
		p.park = x.parkPass
	}
	if x.snapshots.takesFor(c.Run.ID) && mod.Snapshots() {
		p.snaps = &passSnapshots{snapshots: x.snapshots}
	}
	var stats host.Stats
	runLog := &runGuestLog{live: func() bool { return !j.replaying() }, now: x.cfg.Clock.Now}
	j.guestLog = runLog
	j.keepLog = func(ctx context.Context, lines []store.GuestLogLine) { x.keepGuestLog(ctx, log, c.Run, lines) }
	guestLog := newGuestLogCap(teeHandler{log.Handler(), runLog}, maxGuestRecords)
	pass := func(resume *host.Checkpoint) (host.Result, error) {
		return x.cfg.Runtime.Activate(ctx, mod, host.Activation{
			Tenant:   c.Run.TenantID,
			Workflow: c.Run.Workflow,
			Input:    c.Run.Input,
			RunID:    c.Run.ID,
			Handler:  p,
			Limits:   hostLimits(limits),
			Outbound: x.outboundPolicy(limits),
			Logger:   slog.New(guestLog),
			Stats:    &stats,
			Resume:   resume,
		})
	}
	var res host.Result
	resume := p.resumeFrom(c, mod)
	if resume != nil {
		res, err = pass(resume)
		if errors.Is(err, host.ErrRestore) {
			// Nothing of the pass ran: it starts again from the journal's top.
			log.Warn("snapshot not restored; replaying the journal from the top", "err", err)
			p.seen, p.clock, p.lastKey = make(map[string]int), c.Run.CreatedAt, ""
			resume = nil
		} else {
			x.obs.snapshotRestored("restored")
		}
	}
	if resume == nil {
		if c.Snapshot != nil {
			x.obs.snapshotRestored("replayed")
		}
		if err = j.fromTop(ctx); err == nil {
			res, err = pass(nil)
		}
	}
	if err == nil && p.pauseAsked() && !p.cancelRequested() {
		// Asked to pause, the run holds at its end too: its end is progress an operator who
		// paused it did not let it make; the resume replays to it.
		err = p.hold(ctx, "the run's end", nil, false)
	}
	dropped := guestLog.dropped.Load()
	if dropped > 0 {
		log.Warn("guest log records dropped: the activation wrote more than the limit", "dropped", dropped, "limit", maxGuestRecords)
	}
	// A pass that parked and was resumed is observed from its resume on; one that ended
	// parked (evicted, cancelled) was observed to its park already.
	obs = p.obs
	outcome, ended := x.settle(ctx, wctx, log, p.run, j, obs, c.Faults, res, p.cancelSeen, err)
	// A run's end kept the lines with it, so a reader who sees the run ended sees them too,
	// and every write that let the run go kept them before it; what is left is a pass's whose
	// lease was lost or whose run was cancelled under it.
	j.keepGuestLog(wctx)
	if outcome == "suspended" && p.cancelPending() {
		// The cancel came after the workflow's last call: the suspension left the run
		// claimable now (store.Store.Suspend), for the workflow to be told.
		x.wake()
	}
	if obs != nil {
		obs.sandboxed(stats, dropped)
		obs.ended(outcome, err)
	}
	return ended
}

// settle records the end of a pass: a result, a suspension (already committed by the host
// call), a guest fault, an interruption, or a fault that is not the workflow's (faults is the
// run's count of those before this activation). It returns the activation's outcome, for the
// observer.
//
// A workflow that was told of its cancellation (cancelSeen) and fails with code cancelled ends
// cancelled: it compensated, or chose not to, and gave up as asked.
func (x *Executor) settle(ctx, wctx context.Context, log *slog.Logger, run store.Run, j *journal, obs *activationObs, faults int, res host.Result, cancelSeen bool, err error) (outcome string, ended *store.Run) {
	var (
		susp    *suspended
		failure *runFailure
		guest   *host.GuestError
	)
	switch {
	case err == nil:
		next, reached, err := j.unreached(wctx)
		if err != nil {
			return "error", x.fault(wctx, log, run, j, faults, err)
		}
		if next != nil {
			obs.guestFault(abi.CodeNondeterministic)
			f := finishedEarly(reached, next).failure()
			return "finished", x.finish(wctx, log, run, j, f.status, nil, &f.info)
		}
		if res.Continue != nil {
			return "finished", x.continueAsNew(wctx, log, run, j, faults, res.Continue)
		}
		if res.Error != nil {
			status := store.StatusFailed
			if cancelSeen && res.Error.Code == abi.CodeCancelled {
				status = store.StatusCancelled
			}
			return "finished", x.finish(wctx, log, run, j, status, nil, res.Error)
		}
		return "finished", x.finish(wctx, log, run, j, store.StatusCompleted, res.Output, nil)
	case errors.As(err, &susp):
		if !susp.wakeAt.IsZero() {
			x.wakeAt(susp.wakeAt)
		}
		log.Debug("run suspended", "step", susp.step, "reason", susp.reason, "until", susp.wakeAt)
		return "suspended", nil
	case errors.Is(err, store.ErrLeaseLost):
		j.drop()
		log.Info("lease lost; activation abandoned", "err", err)
		return "lease_lost", nil
	case errors.Is(err, host.ErrCheckpoint):
		// The checkpoint was asked for at a step_run the pass had not yet answered: the step
		// before it is still held, and the run goes on from there in another pass, with no
		// snapshot taken on this host.
		x.snapshots.failed(run.ID)
		x.obs.snapshotFailed()
		j.snapshot = nil
		log.Warn("checkpoint failed; the run takes no more snapshots on this host", "err", err)
		if err := j.interrupt(wctx); err != nil {
			log.Warn("commit the last finished step before releasing the run", "err", err)
		}
		x.release(wctx, log, j)
		return "interrupted", nil
	case ctx.Err() != nil:
		x.stopped(ctx, wctx, log, j)
		return "interrupted", nil
	case errors.As(err, &failure):
		obs.guestFault(failure.info.Code)
		return "failed", x.finish(wctx, log, run, j, failure.status, nil, &failure.info)
	case errors.As(err, &guest):
		obs.guestFault(guest.Info.Code)
		return "guest_fault", x.finish(wctx, log, run, j, store.StatusFailed, nil, &guest.Info)
	case errors.Is(err, host.ErrInvalidModule):
		// The module did not compile for this activation's memory limit: trying again cannot
		// help (a failure that is not the module's fault never wraps ErrInvalidModule).
		obs.guestFault(abi.CodeABIViolation)
		return "guest_fault", x.finish(wctx, log, run, j, store.StatusFailed, nil, &abi.ErrorInfo{Code: abi.CodeABIViolation, Message: err.Error()})
	default:
		// A store error in a host call (Postgres restarting, a dropped connection, a value it
		// refused): nothing of the pass after the last commit happened.
		return "error", x.fault(wctx, log, run, j, faults, err)
	}
}

// stopped ends an activation whose context ended (a cancel, a lost lease, a shutdown) by why:
// a cancelled run or a lost lease writes nothing more; a shutdown commits the held step and
// hands the run back, which is no fault of the run's.
func (x *Executor) stopped(ctx, wctx context.Context, log *slog.Logger, j *journal) {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errCancelled):
		j.drop()
		log.Info("activation stopped: run cancelled")
	case errors.Is(cause, store.ErrLeaseLost):
		j.drop()
		log.Info("activation stopped: lease lost")
	default:
		log.Info("activation interrupted; releasing the run", "cause", cause)
		if err := j.interrupt(wctx); err != nil {
			log.Warn("commit the last finished step before releasing the run", "err", err)
		}
		x.release(wctx, log, j)
	}
}

// finish records the run's end through its journal, with the held-back last step when there
// is one. A store that does not answer gets the write again once it does (handback.go); an end
// the store refuses to keep (an output it cannot hold) becomes a failure with code
// store_refused.
// A failed run whose retry policy has attempts left ends with its retry created (retryOf).
func (x *Executor) finish(ctx context.Context, log *slog.Logger, run store.Run, j *journal, status store.RunStatus, output []byte, info *abi.ErrorInfo) (ended *store.Run) {
	return x.end(ctx, log, run, j, &runEnd{status: status, output: output, info: info, next: x.retryOf(run, status, info)})
}

// end writes end as finish does.
func (x *Executor) end(ctx context.Context, log *slog.Logger, run store.Run, j *journal, end *runEnd) (ended *store.Run) {
	status := end.status
	err := j.finish(ctx, end)
	switch {
	case err == nil:
		if j.linked {
			x.service().closeAtEnd(ctx, run.TenantID, run.ID)
		}
		return x.ended(ctx, log, run, end)
	case errors.Is(err, store.ErrLeaseLost):
		log.Info("run finished elsewhere or cancelled; result dropped", "status", status)
		// What the guest logged happened all the same, as it does for a pass that did not end
		// the run (store.Store.AppendGuestLog is not fenced).
		x.keepGuestLog(ctx, log, run, end.guestLog)
	default:
		x.handBacks.keep(&handBack{
			lease: j.lease, what: "record the run's result",
			write: func(ctx context.Context) error { return j.writeEnd(ctx, end) },
			landed: func() {
				if r := x.ended(ctx, log, run, end); r != nil {
					x.waiters.notify(r.ID, r)
				}
			},
			lost: func() { x.keepGuestLog(context.WithoutCancel(ctx), log, run, end.guestLog) },
		}, err)
	}
	return nil
}

// ended counts a run's end once it is written, and returns the run as it ended.
func (x *Executor) ended(ctx context.Context, log *slog.Logger, run store.Run, end *runEnd) *store.Run {
	at := x.cfg.Clock.Now()
	x.obs.runEnded(ctx, run, end.status, end.info, at)
	r := run
	r.Status, r.Output, r.Error, r.CompletedAt, r.UpdatedAt = end.status, end.output, end.info, &at, at
	r.AvailableAt, r.ContinuedAs = nil, end.continuedAs
	if end.continuedAs != "" {
		// The new run is a run started like any other: counted, logged, its start traced.
		x.obs.runStarted(ctx, end.continued)
		// The new run is pending: this host's claimer takes it as it takes a queued start (the
		// hosts' notice of it is not for the host that sent it), or at its retry's time.
		if end.next.NotBefore != nil {
			x.wakeAt(*end.next.NotBefore)
		} else {
			x.backlog.Store(true)
			x.wake()
		}
	}
	// A run's end is at info, a failure's at warn: an operator at the default level sees every
	// run end, and a failure stands out.
	switch {
	case end.continuedAs != "" && end.info != nil:
		log.Warn("run ended; retried as a new run", "status", end.status, "code", end.info.Code, "error", end.info.Message,
			"continued_as", end.continuedAs, "attempt", end.next.Attempt)
	case end.continuedAs != "":
		log.Info("run continued as a new run", "continued_as", end.continuedAs)
	case end.info != nil && end.status != store.StatusCompleted:
		log.Warn("run ended", "status", end.status, "code", end.info.Code, "error", end.info.Message)
	case end.info != nil:
		log.Info("run ended", "status", end.status, "code", end.info.Code, "error", end.info.Message)
	default:
		log.Info("run ended", "status", end.status)
	}
	return &r
}

// Fault backoff: a run handed back after a fault waits faultBackoff, doubling with each fault
// in a row, at most maxFaultBackoff: long enough not to spin on a store that keeps failing,
// short enough that a run interrupted by a restart of the store goes on as soon as it is back
// (the hand-back itself is written only once the store answers).
const (
	faultBackoff    = 250 * time.Millisecond
	maxFaultBackoff = 30 * time.Second
)

// faultDelay is how long a run waits after its nth fault in a row.
func faultDelay(n int) time.Duration {
	d := faultBackoff
	for i := 1; i < n && d < maxFaultBackoff; i++ {
		d *= 2
	}
	return min(d, maxFaultBackoff)
}

// maxFaultReason bounds the reason a fault stores with the run.
const maxFaultReason = 2000

// fault ends an activation that failed for a reason that is not the workflow's: a store error
// in a host call, limits or a module that could not be read. A value the store refused fails
// the run at once (writing it again would fail again). Anything else hands the run back, to be
// tried again after faultDelay, and counts the fault against it (store.Store.Fault), so that a
// run that can never get past it is failed once Config.FaultLimit is reached.
func (x *Executor) fault(ctx context.Context, log *slog.Logger, run store.Run, j *journal, faults int, err error) (ended *store.Run) {
	if errors.Is(err, store.ErrRefused) {
		log.Error("the store refused a write of the run; failing it", "err", err)
		return x.finish(ctx, log, run, j, store.StatusFailed, nil, refusedInfo("a write of the run", err))
	}
	delay := faultDelay(faults + 1)
	at := x.cfg.Clock.Now().Add(delay)
	reason := abi.StorableText(err.Error())
	if len(reason) > maxFaultReason {
		reason = reason[:maxFaultReason]
	}
	log.Error("activation failed; trying the run again later", "err", err, "in", delay, "faults", faults+1)
	x.handBack(ctx, log, &handBack{
		lease: j.lease, what: "hand the faulted run back",
		write:  func(ctx context.Context) error { return j.fault(ctx, reason, at) },
		landed: func() { x.wakeAt(at) },
	})
	return nil
}

// release hands the run back for any host to take at once (shutdown).
func (x *Executor) release(ctx context.Context, log *slog.Logger, j *journal) {
	x.handBack(ctx, log, &handBack{
		lease: j.lease, what: "release the run",
		write: func(ctx context.Context) error { return j.release(ctx) },
	})
}

// handBack makes the write that ends an activation, or keeps it to try again (handback.go).
func (x *Executor) handBack(ctx context.Context, log *slog.Logger, hb *handBack) {
	wctx, cancel := context.WithTimeout(ctx, handBackTimeout)
	err := hb.write(wctx)
	cancel()
	switch {
	case err == nil:
		if hb.landed != nil {
			hb.landed()
		}
	case errors.Is(err, store.ErrLeaseLost):
		log.Info(hb.what + ": the run was taken over or ended meanwhile")
	default:
		x.handBacks.keep(hb, err)
	}
}
