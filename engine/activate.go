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
func (e *Engine) activate(ctx context.Context, c store.Claim) (ended *store.Run) {
	log := e.cfg.Logger.With("tenant", c.Run.TenantID, "workflow", c.Run.Workflow, "run", c.Run.ID)
	if e.tracing.on {
		// The run's trace id is derived from its id: its log records and spans find each other.
		log = log.With("trace_id", TraceIDOf(c.Run.ID))
	}
	// Writes after the guest stops must outlive a cancelled activation context (a shutdown
	// releases the lease; a cancel must not leave a half-written row), so they use this one.
	wctx := context.WithoutCancel(ctx)

	limits, err := e.Limits(ctx, c.Run.TenantID)
	if err != nil {
		log.Error("read the tenant's limits; trying the run again later", "err", err, "in", retryAfterFault)
		e.retryLater(wctx, log, c.Lease)
		return
	}
	mod, err := e.modules.get(ctx, c.Run.TenantID, c.Run.Digest)
	if err != nil {
		if errors.Is(err, host.ErrInvalidModule) {
			return e.finish(wctx, log, c.Run, c.Lease, nil, store.StatusFailed, nil, &abi.ErrorInfo{Code: abi.CodeABIViolation, Message: err.Error()})
		}
		if errors.Is(err, store.ErrNotFound) {
			return e.finish(wctx, log, c.Run, c.Lease, nil, store.StatusFailed, nil, &abi.ErrorInfo{Code: abi.CodeABIViolation, Message: "the run's module is gone: " + err.Error()})
		}
		log.Error("load module; trying the run again later", "err", err, "in", retryAfterFault)
		e.retryLater(wctx, log, c.Lease)
		return
	}
	retry := abi.DefaultRetry
	for _, w := range mod.Description.Workflows {
		if w.Name == c.Run.Workflow && w.Version == c.Run.Version && w.Retry != nil {
			retry = w.Retry.Merge(abi.DefaultRetry)
		}
	}
	p := newPass(e, c, retry, limits.MaxStepsPerRun)
	p.log = log
	defer e.metrics.activationBegan(c.Run)()
	ctx, p.span = e.tracing.startActivation(ctx, c.Run)
	var stats host.Stats
	guestLog := newGuestLogCap(log.Handler(), maxGuestRecords)
	res, err := e.cfg.Runtime.Activate(ctx, mod, host.Activation{
		Tenant:   c.Run.TenantID,
		Workflow: c.Run.Workflow,
		Input:    c.Run.Input,
		RunID:    c.Run.ID,
		Handler:  p,
		Limits:   hostLimits(limits),
		Outbound: e.outboundPolicy(limits),
		Logger:   slog.New(guestLog),
		Stats:    &stats,
	})
	e.metrics.wasmStats(c.Run.TenantID, stats)
	if n := guestLog.dropped.Load(); n > 0 {
		e.metrics.guestLogsDropped.WithLabelValues(c.Run.TenantID).Add(float64(n))
		log.Warn("guest log records dropped: the activation wrote more than the limit", "dropped", n, "limit", maxGuestRecords)
	}
	return e.settle(ctx, wctx, log, p, res, err)
}

// settle records the end of a pass: a result, a suspension (already committed by the host
// call), a guest fault, or an interruption.
func (e *Engine) settle(ctx, wctx context.Context, log *slog.Logger, p *pass, res host.Result, err error) (ended *store.Run) {
	var (
		susp    *suspended
		failure *runFailure
		guest   *host.GuestError
	)
	outcome := "error"
	defer func() {
		e.metrics.activations.WithLabelValues(p.run.TenantID, outcome).Inc()
		p.endSpans(outcome, err)
	}()
	switch {
	case err == nil:
		outcome = "finished"
		if p.cursor < len(p.journal) {
			next := p.journal[p.cursor]
			e.metrics.guestFault(p.run.TenantID, abi.CodeNondeterministic)
			return e.finish(wctx, log, p.run, p.lease, p.pending, store.StatusNondeterministic, nil, &abi.ErrorInfo{
				Code:    abi.CodeNondeterministic,
				Message: fmt.Sprintf("the workflow finished after %d steps but the journal holds %d; the next is %s %q", p.cursor, len(p.journal), next.Kind, next.Key),
			})
		}
		if res.Error != nil {
			return e.finish(wctx, log, p.run, p.lease, p.pending, store.StatusFailed, nil, res.Error)
		}
		return e.finish(wctx, log, p.run, p.lease, p.pending, store.StatusCompleted, res.Output, nil)
	case errors.As(err, &susp):
		outcome = "suspended"
		if !susp.wakeAt.IsZero() {
			e.wakeAt(susp.wakeAt)
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
			e.release(wctx, log, p.lease)
		}
	case errors.As(err, &failure):
		outcome = "failed"
		e.metrics.guestFault(p.run.TenantID, failure.info.Code)
		return e.finish(wctx, log, p.run, p.lease, p.pending, failure.status, nil, &failure.info)
	case errors.As(err, &guest):
		outcome = "guest_fault"
		e.metrics.guestFault(p.run.TenantID, guest.Info.Code)
		return e.finish(wctx, log, p.run, p.lease, p.pending, store.StatusFailed, nil, &guest.Info)
	case errors.Is(err, host.ErrInvalidModule):
		// The module did not compile for this activation's memory limit: trying again cannot
		// help (a failure that is not the module's fault never wraps ErrInvalidModule).
		outcome = "guest_fault"
		e.metrics.guestFault(p.run.TenantID, abi.CodeABIViolation)
		return e.finish(wctx, log, p.run, p.lease, p.pending, store.StatusFailed, nil, &abi.ErrorInfo{Code: abi.CodeABIViolation, Message: err.Error()})
	default:
		// A store error in a host call (Postgres restarting, a dropped connection): nothing of
		// the pass after the last commit happened, so the run is simply tried again.
		log.Error("activation failed; trying the run again later", "err", err, "in", retryAfterFault)
		e.retryLater(wctx, log, p.lease)
	}
	return nil
}

// finish records the run's end, with its held-back last step when there is one.
func (e *Engine) finish(ctx context.Context, log *slog.Logger, run store.Run, l store.Lease, last *store.Step, status store.RunStatus, output []byte, info *abi.ErrorInfo) (ended *store.Run) {
	var err error
	if last != nil {
		err = e.cfg.Store.CommitAndFinish(ctx, l, *last, status, output, info)
	} else {
		err = e.cfg.Store.Finish(ctx, l, status, output, info)
	}
	switch {
	case errors.Is(err, store.ErrLeaseLost):
		log.Info("run finished elsewhere or cancelled; result dropped", "status", status)
	case err != nil:
		// The lease expires and another activation replays the run to the same end.
		log.Error("record run result", "status", status, "err", err)
	default:
		at := time.Now()
		e.tracing.runEnded(ctx, run, status, info, at)
		r := run
		r.Status, r.Output, r.Error, r.CompletedAt, r.UpdatedAt = status, output, info, &at, at
		r.AvailableAt = nil
		ended = &r
		e.metrics.runEnded(run, status, at)
		if info != nil {
			log.Info("run ended", "status", status, "code", info.Code, "error", info.Message)
		} else {
			log.Debug("run ended", "status", status)
		}
	}
	return ended
}

// retryAfterFault is how long a run waits after an activation failed for a reason that is not
// the workflow's (the store unreachable mid-pass, a module that cannot be fetched): long enough
// not to spin while Postgres recovers, short enough not to matter.
const retryAfterFault = 2 * time.Second

// retryLater hands the run back to be tried again after retryAfterFault.
func (e *Engine) retryLater(ctx context.Context, log *slog.Logger, l store.Lease) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	at := time.Now().Add(retryAfterFault)
	if err := e.cfg.Store.Suspend(ctx, l, nil, &at); err != nil && !errors.Is(err, store.ErrLeaseLost) {
		log.Warn("hand the run back; its lease will expire instead", "err", err)
		return
	}
	e.wakeAt(at)
}

// release hands the run back for any host to take at once (shutdown).
func (e *Engine) release(ctx context.Context, log *slog.Logger, l store.Lease) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := e.cfg.Store.Release(ctx, l); err != nil && !errors.Is(err, store.ErrLeaseLost) {
		log.Warn("release lease; it will expire instead", "err", err)
	}
}
