package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// Tracing: one trace per run, over every activation and host, with no state stored for it.
//
// A run's trace id and the span id of its workflow.run span are derived from the run id
// (runSpanContext). Every span about the run (an activation, a step, a signal) names that span
// as its parent, whichever host makes it and whenever. The workflow.run span itself is made
// last, when the run ends, spanning creation to end; TraceIDGenerator lets it take the derived
// ids. So a run that sleeps or waits shows one trace whose activations are separated by gaps.
//
// The alternative, storing the root span context in the run's row, needs a column and a write
// on the start path for something derivable, and still needs the run span made at the end.

// tracerName is the instrumentation scope of the engine's spans.
const tracerName = "github.com/wfhost/wfhost/engine"

// tracing makes the engine's spans. Safe for concurrent use.
type tracing struct {
	tracer trace.Tracer
	// on is false for the no-op provider, so a daemon without OTLP pays nothing.
	on bool
}

func newTracing(tp trace.TracerProvider) *tracing {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	_, isNoop := tp.(noop.TracerProvider)
	return &tracing{tracer: tp.Tracer(tracerName), on: !isNoop}
}

// runSpanContext is the span context of a run's workflow.run span, derived from its id.
func runSpanContext(runID string) trace.SpanContext {
	sum := sha256.Sum256([]byte("wfhost-trace/" + runID))
	var tid trace.TraceID
	var sid trace.SpanID
	copy(tid[:], sum[:16])
	copy(sid[:], sum[16:24])
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true,
	})
}

// TraceIDOf is the trace id of a run's spans, as the hex string trace viewers search for.
func TraceIDOf(runID string) string { return runSpanContext(runID).TraceID().String() }

// inRun is ctx with the run's workflow.run span as the parent of spans started from it.
func inRun(ctx context.Context, runID string) context.Context {
	return trace.ContextWithRemoteSpanContext(ctx, runSpanContext(runID))
}

// startActivation starts the span of one activation of a claimed run.
func (t *tracing) startActivation(ctx context.Context, run store.Run) (context.Context, trace.Span) {
	if !t.on {
		return ctx, trace.SpanFromContext(context.Background())
	}
	return t.tracer.Start(inRun(ctx, run.ID), "workflow.activation", trace.WithAttributes(
		attribute.String("tenant", run.TenantID),
		attribute.String("workflow.name", run.Workflow),
		attribute.String("workflow.version", run.Version),
		attribute.String("run_id", run.ID),
		attribute.Int("activation", run.Activations),
	))
}

// startStep starts a workflow.step span under the activation's span in ctx.
func (t *tracing) startStep(ctx context.Context, key string, kind store.StepKind, attempt int, at time.Time) trace.Span {
	if !t.on {
		return trace.SpanFromContext(context.Background())
	}
	attrs := []attribute.KeyValue{attribute.String("step.name", key), attribute.String("step.kind", string(kind))}
	if attempt > 0 {
		attrs = append(attrs, attribute.Int("step.attempt", attempt))
	}
	_, s := t.tracer.Start(ctx, "workflow.step", trace.WithTimestamp(at), trace.WithAttributes(attrs...))
	return s
}

// signal starts the span of a signal sent to one run, in that run's trace; end it with the
// outcome.
func (t *tracing) signal(ctx context.Context, tenantID, runID, event string) (end func(store.SignalResult, error)) {
	if !t.on {
		return func(store.SignalResult, error) {}
	}
	_, s := t.tracer.Start(inRun(ctx, runID), "workflow.signal", trace.WithAttributes(
		attribute.String("tenant", tenantID),
		attribute.String("run_id", runID),
		attribute.String("event", event),
	))
	return func(res store.SignalResult, err error) {
		s.SetAttributes(attribute.Bool("delivered", res.Delivered), attribute.Bool("duplicate", res.Duplicate))
		endSpan(s, err)
	}
}

// broadcast starts the span of an event sent to a whole tenant: a trace of its own, since it
// may touch many runs.
func (t *tracing) broadcast(ctx context.Context, tenantID, event string) (end func(store.BroadcastResult, error)) {
	if !t.on {
		return func(store.BroadcastResult, error) {}
	}
	_, s := t.tracer.Start(ctx, "workflow.signal", trace.WithAttributes(
		attribute.String("tenant", tenantID),
		attribute.String("event", event),
	))
	return func(res store.BroadcastResult, err error) {
		s.SetAttributes(attribute.Int("resolved", res.Resolved), attribute.Int("started", len(res.Started)))
		endSpan(s, err)
	}
}

// runEnded makes the run's workflow.run span, from its creation to end, with the derived ids.
// With a TracerProvider that does not use TraceIDGenerator the span cannot take them; it is
// then made as a child of the derived span, so the run's spans still share one trace.
func (t *tracing) runEnded(ctx context.Context, run store.Run, status store.RunStatus, info *abi.ErrorInfo, end time.Time) {
	if !t.on {
		return
	}
	want := runSpanContext(run.ID)
	opts := []trace.SpanStartOption{
		trace.WithTimestamp(run.CreatedAt),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("tenant", run.TenantID),
			attribute.String("workflow.name", run.Workflow),
			attribute.String("workflow.version", run.Version),
			attribute.String("run_id", run.ID),
			attribute.String("status", string(status)),
		),
	}
	_, s := t.tracer.Start(context.WithValue(ctx, wantIDsKey{}, want), "workflow.run", append(opts, trace.WithNewRoot())...)
	if s.SpanContext().TraceID() != want.TraceID() || s.SpanContext().SpanID() != want.SpanID() {
		// Left unended, the span is never exported.
		_, s = t.tracer.Start(inRun(ctx, run.ID), "workflow.run", opts...)
	}
	if info != nil {
		s.SetAttributes(attribute.String("error.code", info.Code))
		if status != store.StatusCompleted {
			s.SetStatus(codes.Error, info.Message)
		}
	}
	s.End(trace.WithTimestamp(end))
}

// endSpan ends s, marking it failed when err is not nil.
func endSpan(s trace.Span, err error) {
	if err != nil {
		s.RecordError(err)
		s.SetStatus(codes.Error, err.Error())
	}
	s.End()
}

type wantIDsKey struct{}

// TraceIDGenerator returns the id generator a TracerProvider given to the engine should use
// (sdktrace.WithIDGenerator): it gives each run's workflow.run span the ids the run's other
// spans already name as their parent, and random ids to every other span. Safe for concurrent use.
func TraceIDGenerator() sdktrace.IDGenerator { return runIDGenerator{} }

type runIDGenerator struct{}

func (runIDGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if sc, ok := ctx.Value(wantIDsKey{}).(trace.SpanContext); ok {
		return sc.TraceID(), sc.SpanID()
	}
	var tid trace.TraceID
	_, _ = rand.Read(tid[:])
	return tid, randomSpanID()
}

func (runIDGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	return randomSpanID()
}

func randomSpanID() trace.SpanID {
	var sid trace.SpanID
	_, _ = rand.Read(sid[:])
	return sid
}
