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
// (runSpanContext). Every span about the run (an activation, a step, a signal, its end) names
// that span as its parent, whichever host makes it and whenever. The workflow.run span is made
// by the run's first activation (from the run's creation to that activation: the time it was
// queued), or by its end if it never ran; TraceIDGenerator lets it take the derived ids. So a
// run that sleeps or waits for days has its root exported from its first activation on, and
// its activations are never orphans while it waits. The run's end is a workflow.end span, from
// its creation to its end, with its status: a span, once ended, cannot be changed, so the root
// cannot wait for the end to say it.
//
// The alternative, storing the root span context in the run's row, needs a column and a write
// on the start path for something derivable.
//
// A caller's trace (a traceparent on a start or a signal) is another trace: a start makes a
// workflow.start span in the caller's trace, linked to the run's root, and a signal's span in
// the run's trace links the caller's span. A broadcast's span, in the caller's trace, links
// the roots of the runs it started and resolved.

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
	if run.Activations == 1 {
		t.runRoot(ctx, run, time.Now())
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
	_, s := t.tracer.Start(inRun(ctx, runID), "workflow.signal", trace.WithLinks(callerLinks(ctx)...), trace.WithAttributes(
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
		for i, r := range res.Started {
			if i == maxBroadcastLinks {
				break
			}
			s.AddLink(trace.Link{SpanContext: runSpanContext(r.ID), Attributes: []attribute.KeyValue{attribute.String("run_id", r.ID), attribute.String("relation", "started")}})
		}
		for i, id := range res.ResolvedRuns {
			if i+len(res.Started) >= maxBroadcastLinks {
				break
			}
			s.AddLink(trace.Link{SpanContext: runSpanContext(id), Attributes: []attribute.KeyValue{attribute.String("run_id", id), attribute.String("relation", "resolved")}})
		}
		endSpan(s, err)
	}
}

// maxBroadcastLinks bounds the links of one broadcast's span: a broadcast may touch thousands
// of runs, and a span's links are kept in memory until it is exported.
const maxBroadcastLinks = 128

// callerLinks links the span in ctx, the caller's (a traceparent, or the API's server span),
// when there is one.
func callerLinks(ctx context.Context) []trace.Link {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return []trace.Link{{SpanContext: sc, Attributes: []attribute.KeyValue{attribute.String("relation", "caller")}}}
	}
	return nil
}

// started makes the workflow.start span of a run just created, in the caller's trace (ctx),
// linked to the run's root: from a caller's trace one follows the link to the run's. Without a
// caller's span in ctx it makes nothing: the run's own trace says the rest.
func (t *tracing) started(ctx context.Context, run store.Run) {
	if !t.on || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	_, s := t.tracer.Start(ctx, "workflow.start", trace.WithLinks(trace.Link{SpanContext: runSpanContext(run.ID)}), trace.WithAttributes(
		attribute.String("tenant", run.TenantID),
		attribute.String("workflow.name", run.Workflow),
		attribute.String("workflow.version", run.Version),
		attribute.String("run_id", run.ID),
	))
	s.End()
}

// parentOf makes a workflow.parent span in a child run's trace, under its root, linked to its
// parent's root: the child's root is made by its first activation, wherever that is, so the
// link to the parent hangs beside it, made where the parent started the child.
func (t *tracing) parentOf(ctx context.Context, childID string, parent store.Run, key string) {
	if !t.on {
		return
	}
	_, s := t.tracer.Start(inRun(ctx, childID), "workflow.parent", trace.WithLinks(trace.Link{SpanContext: runSpanContext(parent.ID),
		Attributes: []attribute.KeyValue{attribute.String("run_id", parent.ID), attribute.String("relation", "parent")}}),
		trace.WithAttributes(
			attribute.String("tenant", parent.TenantID),
			attribute.String("run_id", childID),
			attribute.String("parent.run_id", parent.ID),
			attribute.String("parent.workflow", parent.Workflow),
			attribute.String("parent.step", key),
		))
	s.End()
}

// runRoot makes the run's workflow.run span with the derived ids, from its creation to at.
// With a TracerProvider that does not use TraceIDGenerator the span cannot take them; it is
// then made as a child of the derived span, so the run's spans still share one trace.
func (t *tracing) runRoot(ctx context.Context, run store.Run, at time.Time) {
	want := runSpanContext(run.ID)
	opts := []trace.SpanStartOption{
		trace.WithTimestamp(run.CreatedAt),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("tenant", run.TenantID),
			attribute.String("workflow.name", run.Workflow),
			attribute.String("workflow.version", run.Version),
			attribute.String("run_id", run.ID),
		),
	}
	// The root is nobody's child: a start's caller links to it (started).
	ctx = trace.ContextWithSpanContext(ctx, trace.SpanContext{})
	_, s := t.tracer.Start(context.WithValue(ctx, wantIDsKey{}, want), "workflow.run", append(opts, trace.WithNewRoot())...)
	if s.SpanContext().TraceID() != want.TraceID() || s.SpanContext().SpanID() != want.SpanID() {
		// Left unended, the span is never exported.
		_, s = t.tracer.Start(inRun(ctx, run.ID), "workflow.run", opts...)
	}
	s.End(trace.WithTimestamp(at))
}

// runEnded makes the run's workflow.end span, from its creation to end, with its status; and
// its root first if it never ran (a run cancelled while queued).
func (t *tracing) runEnded(ctx context.Context, run store.Run, status store.RunStatus, info *abi.ErrorInfo, end time.Time) {
	if !t.on {
		return
	}
	if run.Activations == 0 {
		t.runRoot(ctx, run, end)
	}
	_, s := t.tracer.Start(inRun(ctx, run.ID), "workflow.end", trace.WithTimestamp(run.CreatedAt), trace.WithAttributes(
		attribute.String("tenant", run.TenantID),
		attribute.String("workflow.name", run.Workflow),
		attribute.String("workflow.version", run.Version),
		attribute.String("run_id", run.ID),
		attribute.String("status", string(status)),
	))
	if info != nil {
		s.SetAttributes(attribute.String("error.code", info.Code))
		if status != store.StatusCompleted && status != store.StatusContinued {
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
