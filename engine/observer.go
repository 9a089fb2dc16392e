package engine

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// observer is the one place the engine's events become metrics (metrics.go) and spans
// (tracing.go). The executor, the pass and the service call it at named events (a run started,
// an activation claimed, a step begun, committed, failed or retrying, a timer due, a wait
// resolved, a run ended), so none of them makes a metric or span call of its own, and what an
// operator sees of an event is decided here, once. Safe for concurrent use.
type observer struct {
	log      *slog.Logger // the run's start and a cancel's end (an activation logs the other ends)
	m        *metrics
	t        *tracing
	outbound outboundStats // wfhost_outbound_requests_total (capabilities.go)
}

// traceID is the trace id to put in a run's log records, when traces are made.
func (o *observer) traceID(runID string) (string, bool) {
	if !o.t.on {
		return "", false
	}
	return TraceIDOf(runID), true
}

// runStarted: a run was created (a start, a signal-with-start, a broadcast's trigger).
func (o *observer) runStarted(ctx context.Context, run store.Run) {
	o.m.runStarted(run)
	o.t.started(ctx, run)
	o.log.Info("run started", o.runAttrs(run)...)
}

// runCancelled: a cancel ended run at at; no activation logs this end, so it is logged here.
func (o *observer) runCancelled(ctx context.Context, run store.Run, at time.Time) {
	o.runEnded(ctx, run, store.StatusCancelled, run.Error, at)
	o.log.Info("run ended", append(o.runAttrs(run), "status", store.StatusCancelled)...)
}

// runAttrs are the attributes of a record about run, as an activation's records carry them.
func (o *observer) runAttrs(run store.Run) []any {
	attrs := []any{"tenant", run.TenantID, "workflow", run.Workflow, "version", run.Version, "run", run.ID}
	if id, ok := o.traceID(run.ID); ok {
		attrs = append(attrs, "trace_id", id)
	}
	return attrs
}

// compiled: a deploy compiled a module for the tenant in d.
func (o *observer) compiled(tenantID string, d time.Duration) {
	if d > 0 {
		o.m.wasmCompile.WithLabelValues(tenantID).Observe(d.Seconds())
	}
}

// runEnded: a run's end was written (by its activation, or by a cancel).
func (o *observer) runEnded(ctx context.Context, run store.Run, status store.RunStatus, info *abi.ErrorInfo, at time.Time) {
	o.t.runEnded(ctx, run, status, info, at)
	o.m.runEnded(run, status, at)
	if info != nil && (info.Code == abi.CodeStoreRefused || info.Code == abi.CodeNoProgress) {
		o.m.stalled(run, info.Code)
	}
}

// signalSent: an event is being sent to one run; call the result with how it went.
func (o *observer) signalSent(ctx context.Context, tenantID, runID, event string) func(store.SignalResult, error) {
	return o.t.signal(ctx, tenantID, runID, event)
}

// broadcastSent: an event is being sent to a tenant; call the result with how it went.
func (o *observer) broadcastSent(ctx context.Context, tenantID, event string) func(store.BroadcastResult, error) {
	return o.t.broadcast(ctx, tenantID, event)
}

// parked, resumed, evicted: a pass was kept parked; resumed by what (timer, claim);
// evicted for reason.
func (o *observer) parked()               { o.m.parks.Inc() }
func (o *observer) resumed(by string)     { o.m.parkResumes.WithLabelValues(by).Inc() }
func (o *observer) evicted(reason string) { o.m.parkEvictions.WithLabelValues(reason).Inc() }

// snapshotTaken, snapshotRestored: a durable snapshot was taken (bytes as stored); a run with
// one was activated from it (restored) or from the journal's top (replayed).
func (o *observer) snapshotTaken(bytes int) {
	o.m.snapshots.Inc()
	o.m.snapshotBytes.Add(float64(bytes))
}
func (o *observer) snapshotRestored(outcome string) {
	o.m.snapshotRestores.WithLabelValues(outcome).Inc()
}

// snapshotFailed: a checkpoint could not be taken (host.ErrCheckpoint).
func (o *observer) snapshotFailed() { o.m.snapshotFailures.Inc() }

// swept and pruned: the sweeper deleted n expired runs, or n broadcasts past their window.
func (o *observer) swept(n int) { o.m.retentionSwept.Add(float64(n)) }

// scheduleFired counts a fire time a schedule handled, by what became of it.
func (o *observer) scheduleFired(outcome string) { o.m.scheduleFires.WithLabelValues(outcome).Inc() }
func (o *observer) pruned(n int)                 { o.m.broadcastsPruned.Add(float64(n)) }

// activationObs is what the observer keeps of one activation. Only the activation's goroutine
// uses it.
type activationObs struct {
	o    *observer
	run  store.Run
	span trace.Span
	done func() // ends the in-flight count and times the activation
	step *stepObs
}

// stepObs is one step's span and start, from its callback's start to its outcome.
type stepObs struct {
	key     string
	started time.Time
	span    trace.Span
}

// claimed: an activation of run begins. The returned context carries its span, for the host
// calls' spans to hang under.
func (o *observer) claimed(ctx context.Context, run store.Run) (context.Context, *activationObs) {
	a := &activationObs{o: o, run: run, done: o.m.activationBegan(run)}
	ctx, a.span = o.t.startActivation(ctx, run)
	return ctx, a
}

// parent is the context of a host call with this activation's span in it: a pass resumed
// after parking (parking.go) makes its calls in the context of the activation it began as.
func (a *activationObs) parent(ctx context.Context) context.Context {
	if !a.o.t.on {
		return ctx // no spans are made: nothing to hang them under, and no context to build per step
	}
	return trace.ContextWithSpan(ctx, a.span)
}

// sandboxed: what the activation cost the sandbox, and how many guest log records it dropped.
func (a *activationObs) sandboxed(stats host.Stats, droppedLogs int64) {
	a.o.m.wasmStats(a.run.TenantID, stats)
	if droppedLogs > 0 {
		a.o.m.guestLogsDropped.WithLabelValues(a.run.TenantID).Add(float64(droppedLogs))
	}
}

// stepStarted: a step's callback starts (attempt of it) at at.
func (a *activationObs) stepStarted(ctx context.Context, key string, attempt int, at time.Time) {
	a.step = &stepObs{key: key, started: at, span: a.o.t.startStep(a.parent(ctx), key, store.KindRun, attempt, at)}
}

// stepDone: the running step's callback returned; info is its failure (nil: it succeeded),
// and retryAt, when not zero, when its next attempt is due.
func (a *activationObs) stepDone(info *abi.ErrorInfo, retryAt time.Time) {
	st := a.step
	a.step = nil
	if st == nil {
		return
	}
	if !retryAt.IsZero() {
		a.o.m.stepRetry(a.run, st.key)
		st.span.SetAttributes(attribute.String("step.retry_at", retryAt.Format(time.RFC3339Nano)))
	} else {
		a.o.m.stepDone(a.run, st.key, clock.Since(a.o.m.clock, st.started))
	}
	if info != nil {
		endSpan(st.span, info)
		return
	}
	st.span.End()
}

// sleepReached: the pass reaches a sleep for the first time; call the result once it is
// journaled.
func (a *activationObs) sleepReached(ctx context.Context, key string, at, wake time.Time) (end func()) {
	s := a.o.t.startStep(a.parent(ctx), key, store.KindSleep, 0, at)
	s.SetAttributes(attribute.String("step.wake_at", wake.Format(time.RFC3339Nano)))
	return func() { s.End() }
}

// waitReached: the pass reaches a wait for the first time; call the result once it is
// journaled (parked or resolved).
func (a *activationObs) waitReached(ctx context.Context, key, event string, at time.Time) (end func()) {
	s := a.o.t.startStep(a.parent(ctx), key, store.KindWait, 0, at)
	s.SetAttributes(attribute.String("event", event))
	return func() { s.End() }
}

// childReached: the pass reaches a child step for the first time; call the result with the
// child's run id ("" when none was started) once it is journaled. The step's span links to the
// child's trace, and a workflow.parent span in the child's trace links back to this run's.
func (a *activationObs) childReached(ctx context.Context, key, workflow string, at time.Time) (end func(childID string)) {
	s := a.o.t.startStep(a.parent(ctx), key, store.KindChild, 0, at)
	return func(childID string) {
		if childID != "" && a.o.t.on {
			s.AddLink(trace.Link{SpanContext: runSpanContext(childID), Attributes: []attribute.KeyValue{
				attribute.String("run_id", childID), attribute.String("relation", "child")}})
			s.SetAttributes(attribute.String("child.workflow", workflow), attribute.String("child.run_id", childID))
			a.o.t.parentOf(ctx, childID, a.run, key)
		}
		s.End()
	}
}

// outboundRequested: a step callback's outbound request (or a redirect hop of it) was
// answered, refused or failed.
func (a *activationObs) outboundRequested(rec host.OutboundRecord) {
	a.o.outbound.record(a.run.TenantID, rec)
}

// timerDue: a timer of kind (sleep, wait_timeout, retry) due at due was acted on at now.
func (a *activationObs) timerDue(kind string, due, now time.Time) { a.o.m.timerDue(kind, due, now) }

// signalled: an event resolved the run's wait, seen by this pass first.
func (a *activationObs) signalled(event string) { a.o.m.signalled(a.run, event) }

// guestFault: the run is ending by the guest's fault with code.
func (a *activationObs) guestFault(code string) { a.o.m.guestFault(a.run.TenantID, code) }

// ended: the activation ended with outcome (finished, suspended, failed, ...); err is why,
// and the step whose callback it never finished, if any, ends with it.
func (a *activationObs) ended(outcome string, err error) {
	a.o.m.activations.WithLabelValues(a.run.TenantID, outcome).Inc()
	if a.step != nil {
		endSpan(a.step.span, err)
		a.step = nil
	}
	a.span.SetAttributes(attribute.String("outcome", outcome))
	var susp *suspended
	if errors.As(err, &susp) {
		a.span.SetAttributes(attribute.String("suspended_at", susp.step))
		err = nil
	}
	endSpan(a.span, err)
	a.done()
}
