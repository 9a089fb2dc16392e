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
// the claim's lease, so a host that lost the run can never overwrite the one that took it.
// It returns the run as it ended when this pass recorded its end, for the caller to hand to
// AwaitRun's waiters once the activation's slot is free.
func (x *Executor) activate(ctx context.Context, c store.Claim) (ended *store.Run) {
	log := x.cfg.Logger.With("tenant", c.Run.TenantID, "workflow", c.Run.Workflow, "run", c.Run.ID)
	if x.tracing.on {
		// The run's trace id is derived from its id: its log records and spans find each other.
		log = log.With("trace_id", TraceIDOf(c.Run.ID))
	}
	// Writes after the guest stops must outlive a cancelled activation context (a shutdown
	// releases the lease; a cancel must not leave a half-written row), so they use this one.
	wctx := context.WithoutCancel(ctx)

	if c.Faults >= x.cfg.FaultLimit {
		// Activated this often in a row without progress, the run is not going to make any.
		return x.finish(wctx, log, c.Run, c.Lease, nil, store.StatusFailed, nil, &abi.ErrorInfo{
			Code: abi.CodeNoProgress,
			Message: abi.StorableText(fmt.Sprintf("the run was activated %d times in a row without journal progress; the last fault: %s",
				c.Faults, c.LastFault)),
		})
	}
	limits, err := x.limits.get(ctx, c.Run.TenantID)
	if err != nil {
		return x.fault(wctx, log, c.Run, c.Lease, c.Faults, fmt.Errorf("read the tenant's limits: %w", err))
	}
	mod, err := x.modules.get(ctx, c.Run.TenantID, c.Run.Digest)
	if err != nil {
		if errors.Is(err, host.ErrInvalidModule) {
			return x.finish(wctx, log, c.Run, c.Lease, nil, store.StatusFailed, nil, &abi.ErrorInfo{Code: abi.CodeABIViolation, Message: err.Error()})
		}
		if errors.Is(err, store.ErrNotFound) {
			return x.finish(wctx, log, c.Run, c.Lease, nil, store.StatusFailed, nil, &abi.ErrorInfo{Code: abi.CodeABIViolation, Message: "the run's module is gone: " + err.Error()})
		}
		return x.fault(wctx, log, c.Run, c.Lease, c.Faults, fmt.Errorf("load the run's module: %w", err))
	}
	retry := abi.DefaultRetry
	for _, w := range mod.Description.Workflows {
		if w.Name == c.Run.Workflow && w.Version == c.Run.Version && w.Retry != nil {
			retry = w.Retry.Merge(abi.DefaultRetry)
		}
	}
	p := newPass(x, c, retry, limits.MaxStepsPerRun)
	p.log = log
	defer x.metrics.activationBegan(c.Run)()
	ctx, p.span = x.tracing.startActivation(ctx, c.Run)
	var stats host.Stats
	guestLog := newGuestLogCap(log.Handler(), maxGuestRecords)
	res, err := x.cfg.Runtime.Activate(ctx, mod, host.Activation{
		Tenant:   c.Run.TenantID,
		Workflow: c.Run.Workflow,
		Input:    c.Run.Input,
		RunID:    c.Run.ID,
		Handler:  p,
		Limits:   hostLimits(limits),
		Outbound: x.outboundPolicy(limits),
		Logger:   slog.New(guestLog),
		Stats:    &stats,
	})
	x.metrics.wasmStats(c.Run.TenantID, stats)
	if n := guestLog.dropped.Load(); n > 0 {
		x.metrics.guestLogsDropped.WithLabelValues(c.Run.TenantID).Add(float64(n))
		log.Warn("guest log records dropped: the activation wrote more than the limit", "dropped", n, "limit", maxGuestRecords)
	}
	return x.settle(ctx, wctx, log, p, c.Faults, res, err)
}

// settle records the end of a pass: a result, a suspension (already committed by the host
// call), a guest fault, an interruption, or a fault that is not the workflow's (faults is the
// run's count of those before this activation).
func (x *Executor) settle(ctx, wctx context.Context, log *slog.Logger, p *pass, faults int, res host.Result, err error) (ended *store.Run) {
	var (
		susp    *suspended
		failure *runFailure
		guest   *host.GuestError
	)
	outcome := "error"
	defer func() {
		x.metrics.activations.WithLabelValues(p.run.TenantID, outcome).Inc()
		p.endSpans(outcome, err)
	}()
	switch {
	case err == nil:
		outcome = "finished"
		if p.cursor < len(p.journal) {
			next := p.journal[p.cursor]
			x.metrics.guestFault(p.run.TenantID, abi.CodeNondeterministic)
			return x.finish(wctx, log, p.run, p.lease, p.pending, store.StatusNondeterministic, nil, &abi.ErrorInfo{
				Code:    abi.CodeNondeterministic,
				Message: fmt.Sprintf("the workflow finished after %d steps but the journal holds %d; the next is %s %q", p.cursor, len(p.journal), next.Kind, next.Key),
			})
		}
		if res.Error != nil {
			return x.finish(wctx, log, p.run, p.lease, p.pending, store.StatusFailed, nil, res.Error)
		}
		return x.finish(wctx, log, p.run, p.lease, p.pending, store.StatusCompleted, res.Output, nil)
	case errors.As(err, &susp):
		outcome = "suspended"
		if !susp.wakeAt.IsZero() {
			x.wakeAt(susp.wakeAt)
		}
		log.Debug("run suspended", "step", susp.step, "reason", susp.reason, "until", susp.wakeAt)
	case errors.Is(err, store.ErrLeaseLost):
		outcome = "lease_lost"
		log.Info("lease lost; activation abandoned", "err", err)
	case ctx.Err() != nil:
		outcome = "interrupted"
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, errCancelled):
			log.Info("activation stopped: run cancelled")
		case errors.Is(cause, store.ErrLeaseLost):
			log.Info("activation stopped: lease lost")
		default:
			log.Info("activation interrupted; releasing the run", "cause", cause)
			if err := p.flush(wctx); err != nil {
				log.Warn("commit the last finished step before releasing the run", "err", err)
			}
			x.release(wctx, log, p.lease)
		}
	case errors.As(err, &failure):
		outcome = "failed"
		x.metrics.guestFault(p.run.TenantID, failure.info.Code)
		return x.finish(wctx, log, p.run, p.lease, p.pending, failure.status, nil, &failure.info)
	case errors.As(err, &guest):
		outcome = "guest_fault"
		x.metrics.guestFault(p.run.TenantID, guest.Info.Code)
		return x.finish(wctx, log, p.run, p.lease, p.pending, store.StatusFailed, nil, &guest.Info)
	case errors.Is(err, host.ErrInvalidModule):
		// The module did not compile for this activation's memory limit: trying again cannot
		// help (a failure that is not the module's fault never wraps ErrInvalidModule).
		outcome = "guest_fault"
		x.metrics.guestFault(p.run.TenantID, abi.CodeABIViolation)
		return x.finish(wctx, log, p.run, p.lease, p.pending, store.StatusFailed, nil, &abi.ErrorInfo{Code: abi.CodeABIViolation, Message: err.Error()})
	default:
		// A store error in a host call (Postgres restarting, a dropped connection, a value it
		// refused): nothing of the pass after the last commit happened.
		return x.fault(wctx, log, p.run, p.lease, faults, err)
	}
	return nil
}

// finish records the run's end, with its held-back last step when there is one. A store that
// does not answer gets the write again once it does (handback.go); an end the store refuses to
// keep (an output it cannot hold) becomes a failure with code store_refused.
func (x *Executor) finish(ctx context.Context, log *slog.Logger, run store.Run, l store.Lease, last *store.Step, status store.RunStatus, output []byte, info *abi.ErrorInfo) (ended *store.Run) {
	end := &runEnd{last: last, status: status, output: output, info: info}
	err := x.writeEnd(ctx, l, end)
	switch {
	case err == nil:
		return x.ended(ctx, log, run, end)
	case errors.Is(err, store.ErrLeaseLost):
		log.Info("run finished elsewhere or cancelled; result dropped", "status", status)
	default:
		x.handBacks.keep(&handBack{
			lease: l, what: "record the run's result",
			write: func(ctx context.Context) error { return x.writeEnd(ctx, l, end) },
			landed: func() {
				if r := x.ended(ctx, log, run, end); r != nil {
					x.waiters.notify(r.ID, r)
				}
			},
		}, err)
	}
	return nil
}

// runEnd is a run's end as it is to be written.
type runEnd struct {
	last   *store.Step
	status store.RunStatus
	output []byte
	info   *abi.ErrorInfo
}

// writeEnd writes end. When the store refuses it (the output or the last step holds a value it
// cannot keep), writing it again would fail again: end becomes the run's failure with code
// store_refused, written without the refused values.
func (x *Executor) writeEnd(ctx context.Context, l store.Lease, end *runEnd) error {
	var err error
	if end.last != nil {
		err = x.cfg.Store.CommitAndFinish(ctx, l, *end.last, end.status, end.output, end.info)
	} else {
		err = x.cfg.Store.Finish(ctx, l, end.status, end.output, end.info)
	}
	if errors.Is(err, store.ErrRefused) && (end.last != nil || end.info == nil || end.info.Code != abi.CodeStoreRefused) {
		*end = runEnd{status: store.StatusFailed, info: refusedInfo("the run's end", err)}
		err = x.cfg.Store.Finish(ctx, l, end.status, nil, end.info)
	}
	return err
}

// refusedInfo is the failure of a run whose write (what) the store refused with err.
func refusedInfo(what string, err error) *abi.ErrorInfo {
	info := abi.ErrorInfo{Code: abi.CodeStoreRefused, Message: "the store refused to keep " + what + ": " + err.Error()}.Storable()
	return &info
}

// ended counts a run's end once it is written, and returns the run as it ended.
func (x *Executor) ended(ctx context.Context, log *slog.Logger, run store.Run, end *runEnd) *store.Run {
	at := time.Now()
	x.tracing.runEnded(ctx, run, end.status, end.info, at)
	r := run
	r.Status, r.Output, r.Error, r.CompletedAt, r.UpdatedAt = end.status, end.output, end.info, &at, at
	r.AvailableAt = nil
	x.metrics.runEnded(run, end.status, at)
	if end.info != nil {
		if end.info.Code == abi.CodeStoreRefused || end.info.Code == abi.CodeNoProgress {
			x.metrics.stalled(run, end.info.Code)
		}
		log.Info("run ended", "status", end.status, "code", end.info.Code, "error", end.info.Message)
	} else {
		log.Debug("run ended", "status", end.status)
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
func (x *Executor) fault(ctx context.Context, log *slog.Logger, run store.Run, l store.Lease, faults int, err error) (ended *store.Run) {
	if errors.Is(err, store.ErrRefused) {
		log.Error("the store refused a write of the run; failing it", "err", err)
		return x.finish(ctx, log, run, l, nil, store.StatusFailed, nil, refusedInfo("a write of the run", err))
	}
	delay := faultDelay(faults + 1)
	at := time.Now().Add(delay)
	reason := abi.StorableText(err.Error())
	if len(reason) > maxFaultReason {
		reason = reason[:maxFaultReason]
	}
	log.Error("activation failed; trying the run again later", "err", err, "in", delay, "faults", faults+1)
	x.handBack(ctx, log, &handBack{
		lease: l, what: "hand the faulted run back",
		write:  func(ctx context.Context) error { return x.cfg.Store.Fault(ctx, l, reason, at) },
		landed: func() { x.wakeAt(at) },
	})
	return nil
}

// release hands the run back for any host to take at once (shutdown).
func (x *Executor) release(ctx context.Context, log *slog.Logger, l store.Lease) {
	x.handBack(ctx, log, &handBack{
		lease: l, what: "release the run",
		write: func(ctx context.Context) error { return x.cfg.Store.Release(ctx, l) },
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
