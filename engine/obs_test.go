package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// obsHarness is the harness with the engine's metrics on a registry of the test's own and its
// spans in an in-memory exporter.
type obsHarness struct {
	*harness
	reg   *prometheus.Registry
	spans *tracetest.InMemoryExporter
}

func setupObs(t *testing.T) *obsHarness {
	t.Helper()
	return setupObsWith(t, sdktrace.WithIDGenerator(engine.TraceIDGenerator()))
}

// setupObsWith is setupObs with the given options for the TracerProvider.
func setupObsWith(t *testing.T, opts ...sdktrace.TracerProviderOption) *obsHarness {
	t.Helper()
	reg := prometheus.NewRegistry()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithSyncer(spans)}, opts...)...)
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	h := setup(t, harnessOptions{metrics: reg, tracerProvider: tp, runStatesInterval: 10 * time.Millisecond})
	h.deploy("examples.wasm", false)
	return &obsHarness{harness: h, reg: reg, spans: spans}
}

// scrape reads /metrics from the API handler over HTTP, as Prometheus would.
func (o *obsHarness) scrape() map[string]*dto.MetricFamily {
	o.t.Helper()
	srv := httptest.NewServer(api.New(api.Config{Service: o.engine.Service, Store: o.store, Gatherer: o.reg}))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		o.t.Fatalf("scrape: %v", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		o.t.Fatalf("scrape: %s %s", res.Status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		o.t.Fatalf("parse the scrape: %v\n%s", err, body)
	}
	return families
}

// quietScrape scrapes once no activation runs: a run's end is committed (and seen by the
// test) a moment before its activation has finished counting.
func (o *obsHarness) quietScrape() map[string]float64 {
	o.t.Helper()
	var got map[string]float64
	testenv.Await(o.t, settle, func() error {
		got = series(o.scrape())
		if oldest := got["wfhost_activation_oldest_seconds{}"]; oldest > 0 {
			return fmt.Errorf("activations still running: the oldest for %vs", oldest)
		}
		for k, v := range got {
			if strings.HasPrefix(k, "wfhost_activations_in_flight{") && v != 0 {
				return fmt.Errorf("activations still running: %s = %v", k, v)
			}
		}
		return nil
	})
	return got
}

// series flattens a scrape into "name{label=value,...}" -> value, labels sorted; histograms
// contribute their _count.
func series(families map[string]*dto.MetricFamily) map[string]float64 {
	out := make(map[string]float64)
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			key := name + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Histogram != nil:
				out[strings.Replace(key, "{", "_count{", 1)] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// TestMetricsAfterScenario: runs completed, failed, retried, signalled and swept show their
// exact counts in a scrape of /metrics.
func TestMetricsAfterScenario(t *testing.T) {
	t.Parallel()
	o := setupObs(t)
	ctx := context.Background()

	done := o.start("steps", map[string]any{"n": 3})
	saga := o.start("order-saga", map[string]any{"orderId": "o-9", "amount": 7, "failPayment": true})
	onb := o.start("onboarding", map[string]any{"email": "obs@example.com", "delayMs": 1, "failWelcome": 2, "verifyTimeoutMs": 600000})
	if r := o.await(done.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("steps: %s %+v", r.Status, r.Error)
	}
	if r := o.await(saga.ID, settle); r.Status != store.StatusFailed {
		t.Fatalf("saga: %s %+v, want failed", r.Status, r.Error)
	}
	o.awaitStep(onb.ID, "await-verify", store.StepWaiting, settle)
	res, err := o.engine.Signal(ctx, store.DefaultTenant, engine.SignalRequest{RunID: onb.ID, Event: "verify", Payload: json.RawMessage(`{"userId":"` + o.userID(onb.ID) + `"}`)})
	delivered := res.Delivered
	if err != nil || !delivered {
		t.Fatalf("signal: delivered=%v err=%v", delivered, err)
	}
	if r := o.await(onb.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("onboarding: %s %+v", r.Status, r.Error)
	}
	// A run cancelled while it waits counts as cancelled.
	cancelled := o.start("onboarding", map[string]any{"email": "gone@example.com", "delayMs": 1, "verifyTimeoutMs": 600000})
	o.awaitStep(cancelled.ID, "await-verify", store.StepWaiting, settle)
	if _, err := o.engine.TerminateRun(ctx, store.DefaultTenant, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	o.sql(`UPDATE runs SET expires_at = now() - interval '1 day' WHERE id IN ($1, $2)`, done.ID, saga.ID)
	if n := o.engine.Sweep(ctx); n != 2 {
		t.Fatalf("swept %d, want 2", n)
	}

	got := o.quietScrape()
	want := map[string]float64{
		"wfhost_runs_started_total{tenant=default,workflow=steps}":                                   1,
		"wfhost_runs_started_total{tenant=default,workflow=order-saga}":                              1,
		"wfhost_runs_started_total{tenant=default,workflow=onboarding}":                              2,
		"wfhost_runs_ended_total{status=completed,tenant=default,workflow=steps}":                    1,
		"wfhost_runs_ended_total{status=failed,tenant=default,workflow=order-saga}":                  1,
		"wfhost_runs_ended_total{status=completed,tenant=default,workflow=onboarding}":               1,
		"wfhost_runs_ended_total{status=cancelled,tenant=default,workflow=onboarding}":               1,
		"wfhost_run_duration_seconds_count{tenant=default,workflow=onboarding}":                      2,
		"wfhost_activations_in_flight{tenant=default,workflow=onboarding}":                           0,
		"wfhost_activations_in_flight{tenant=default,workflow=steps}":                                0,
		"wfhost_step_retries_total{step=send-welcome,tenant=default,workflow=onboarding}":            2,
		"wfhost_step_retries_total{step=charge-payment,tenant=default,workflow=order-saga}":          2,
		"wfhost_step_duration_seconds_count{step=s,tenant=default,workflow=steps}":                   3, // s, s#1, s#2 under one label
		"wfhost_step_duration_seconds_count{step=charge-payment,tenant=default,workflow=order-saga}": 1, // the last attempt; retried ones count as retries
		"wfhost_signals_total{event=verify,tenant=default,workflow=onboarding}":                      1,
		"wfhost_retention_swept_total{}":                                                             2,
		"wfhost_timer_lateness_seconds_count{kind=retry}":                                            4,
		"wfhost_activation_oldest_seconds{}":                                                         0,
		"wfhost_wasm_guest_faults_total{cause=trap,tenant=default}":                                  0, // nothing trapped, and the series is there from the start
		"wfhost_wasm_instances_discarded_total{reason=faulted,tenant=default}":                       0, // likewise
		"wfhost_store_commit_seconds_count{op=reach_wait}":                                           2,
	}
	var bad []string
	for k, v := range want {
		g, ok := got[k]
		switch {
		case v < 0 && ok:
			bad = append(bad, fmt.Sprintf("%s = %v, want absent", k, g))
		case v >= 0 && !ok:
			bad = append(bad, fmt.Sprintf("%s absent, want %v", k, v))
		case v >= 0 && g != v:
			bad = append(bad, fmt.Sprintf("%s = %v, want %v", k, g, v))
		}
	}
	// The wasm and store figures are there, whatever their values.
	for _, k := range []string{
		"wfhost_wasm_instantiate_seconds_count{tenant=default}", "wfhost_wasm_memory_bytes_count{tenant=default}",
		"wfhost_store_commit_seconds_count{op=commit_and_finish}", "wfhost_store_claim_batch_size_count{}",
		"wfhost_timer_lateness_seconds_count{kind=sleep}",
	} {
		if got[k] <= 0 {
			bad = append(bad, k+" has no observation")
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		t.Fatalf("scrape differs:\n  %s", strings.Join(bad, "\n  "))
	}
}

// TestGuestFaultMetrics: a trap and a timeout count by cause.
func TestGuestFaultMetrics(t *testing.T) {
	t.Parallel()
	o := setupObs(t)
	o.deploy("hostile.wasm", false)
	if r := o.await(o.start("trap", nil).ID, settle); r.Status != store.StatusFailed {
		t.Fatalf("trap: %s, want failed", r.Status)
	}
	if _, err := o.engine.SetTenantLimits(context.Background(), store.DefaultTenant, store.Limits{ActivationTimeoutMs: 300}); err != nil {
		t.Fatal(err)
	}
	if r := o.await(o.start("spin", nil).ID, settle); r.Status != store.StatusFailed {
		t.Fatalf("spin: %s, want failed", r.Status)
	}
	got := o.quietScrape()
	for k, v := range map[string]float64{
		"wfhost_wasm_guest_faults_total{cause=trap,tenant=default}":              1,
		"wfhost_wasm_guest_faults_total{cause=deadline_exceeded,tenant=default}": 1,
		"wfhost_runs_ended_total{status=failed,tenant=default,workflow=trap}":    1,
		// Both instances are closed, not kept: a fault may have left one's stack grown.
		"wfhost_wasm_instances_discarded_total{reason=faulted,tenant=default}": 2,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

// span is a finished span as the tree test compares it.
type span struct {
	id, parent string
	start      time.Time
	line       string // name and the compared attributes
}

// TestTraceOfARunThatWaits: a run that waits for a signal spans two activations, and all of
// its spans make one trace under workflow.run, with the signal's span in it; while it waits,
// the spans exported so far already have their parents (the root is made by the first
// activation, not at the end).
func TestTraceOfARunThatWaits(t *testing.T) {
	t.Parallel()
	o := setupObs(t)
	ctx := context.Background()
	run := o.start("onboarding", map[string]any{"email": "trace@example.com", "delayMs": 1, "failWelcome": 1, "verifyTimeoutMs": 600000})
	o.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)
	o.quietScrape()
	waiting := o.spans.GetSpans()
	exported := map[string]bool{}
	for _, s := range waiting {
		exported[s.SpanContext.SpanID().String()] = true
	}
	if len(waiting) < 3 {
		t.Fatalf("while the run waits, %d spans exported", len(waiting))
	}
	for _, s := range waiting {
		if s.Parent.IsValid() && !exported[s.Parent.SpanID().String()] {
			t.Fatalf("while the run waits, span %s names parent %s, which is not exported", s.Name, s.Parent.SpanID())
		}
	}
	if _, err := o.engine.Signal(ctx, store.DefaultTenant, engine.SignalRequest{RunID: run.ID, Event: "verify", Payload: json.RawMessage(`{"userId":"` + o.userID(run.ID) + `"}`)}); err != nil {
		t.Fatal(err)
	}
	if r := o.await(run.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("run: %s %+v", r.Status, r.Error)
	}
	// The last activation's span ends a moment after the run's end is committed.
	o.quietScrape()

	stubs := o.spans.GetSpans()
	ids := make(map[string]bool)
	traceID := engine.TraceIDOf(run.ID)
	for _, s := range stubs {
		if s.SpanContext.TraceID().String() != traceID {
			t.Fatalf("span %s in trace %s, want the run's trace %s", s.Name, s.SpanContext.TraceID(), traceID)
		}
		ids[s.SpanContext.SpanID().String()] = true
	}
	var tree []span
	for _, s := range stubs {
		sp := span{id: s.SpanContext.SpanID().String(), start: s.StartTime}
		if s.Parent.IsValid() {
			sp.parent = s.Parent.SpanID().String()
			if !ids[sp.parent] {
				t.Fatalf("span %s names parent %s, which is not in the trace", s.Name, sp.parent)
			}
		}
		var attrs []string
		for _, kv := range s.Attributes {
			switch kv.Key {
			case "step.name", "step.kind", "step.attempt", "event", "status", "workflow.name", "workflow.version", "outcome", "run_id":
				attrs = append(attrs, string(kv.Key)+"="+kv.Value.Emit())
			}
		}
		sort.Strings(attrs)
		sp.line = strings.Join(append([]string{s.Name}, attrs...), " ")
		tree = append(tree, sp)
	}
	got := render(tree)
	// The pass parks at the sleep and is resumed (a new activation span, its steps under it);
	// the failed attempt's retry, reached in step_done, unwinds (parking.go); the replay after
	// the backoff parks at the wait, and the signal resumes it.
	want := strings.Join([]string{
		"workflow.run run_id=" + run.ID + " workflow.name=onboarding workflow.version=1",
		"  workflow.end run_id=" + run.ID + " status=completed workflow.name=onboarding workflow.version=1",
		"  workflow.activation outcome=parked run_id=" + run.ID + " workflow.name=onboarding workflow.version=1",
		"    workflow.step step.attempt=1 step.kind=run step.name=create-user",
		"    workflow.step step.kind=sleep step.name=welcome-delay",
		"  workflow.activation outcome=suspended run_id=" + run.ID + " workflow.name=onboarding workflow.version=1",
		"    workflow.step step.attempt=1 step.kind=run step.name=send-welcome",
		"  workflow.activation outcome=parked run_id=" + run.ID + " workflow.name=onboarding workflow.version=1",
		"    workflow.step step.attempt=2 step.kind=run step.name=send-welcome",
		"    workflow.step event=verify step.kind=wait step.name=await-verify",
		"  workflow.signal event=verify run_id=" + run.ID,
		"  workflow.activation outcome=finished run_id=" + run.ID + " workflow.name=onboarding workflow.version=1",
	}, "\n")
	if got != want {
		t.Fatalf("span tree:\n%s\nwant:\n%s", got, want)
	}
	// The run's log records carry the same trace id.
	if !strings.Contains(o.logs.String(), `"trace_id":"`+traceID+`"`) {
		t.Fatal("the run's log records do not carry its trace id")
	}
}

// render prints the tree depth-first, children in the order they started (the exporter's
// order is the order spans ended).
func render(spans []span) string {
	sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
	var lines []string
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		for _, s := range spans {
			if s.parent == parent {
				lines = append(lines, strings.Repeat("  ", depth)+s.line)
				walk(s.id, depth+1)
			}
		}
	}
	walk("", 0)
	return strings.Join(lines, "\n")
}

// TestGuestLogsAreBounded: an activation's guest writes at most 1,000 log records; the rest are
// counted, reported once, and the run is unaffected.
func TestGuestLogsAreBounded(t *testing.T) {
	t.Parallel()
	o := setupObs(t)
	run := o.start("steps", map[string]any{"n": 1003}) // one record per step, all in one activation
	if r := o.await(run.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("run: %s %+v", r.Status, r.Error)
	}
	got := o.quietScrape()
	if v := got["wfhost_guest_log_records_dropped_total{tenant=default}"]; v != 3 {
		t.Fatalf("dropped = %v, want 3", v)
	}
	logs := o.logs.String()
	if n := strings.Count(logs, `"msg":"step ran index=`); n != 1000 {
		t.Fatalf("%d guest records written, want 1000", n)
	}
	if !strings.Contains(logs, `"msg":"guest log records dropped: the activation wrote more than the limit","tenant":"default","workflow":"steps","run":"`+run.ID+`","trace_id":"`+engine.TraceIDOf(run.ID)+`","dropped":3`) {
		t.Fatalf("no report of the dropped records:\n%s", o.logs.tail(2000))
	}
}

// TestTraceWithAnotherIDGenerator: with a TracerProvider that does not use TraceIDGenerator,
// the run's spans still make one trace; workflow.run is then a sibling of the activations.
func TestTraceWithAnotherIDGenerator(t *testing.T) {
	t.Parallel()
	o := setupObsWith(t)
	run := o.start("steps", map[string]any{"n": 2, "sleepMs": 20})
	if r := o.await(run.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("run: %s %+v", r.Status, r.Error)
	}
	o.quietScrape()
	names := map[string]int{}
	for _, s := range o.spans.GetSpans() {
		if s.SpanContext.TraceID().String() != engine.TraceIDOf(run.ID) {
			t.Fatalf("span %s in trace %s, want %s", s.Name, s.SpanContext.TraceID(), engine.TraceIDOf(run.ID))
		}
		names[s.Name]++
	}
	if names["workflow.run"] != 1 || names["workflow.end"] != 1 || names["workflow.activation"] != 2 || names["workflow.step"] != 3 {
		t.Fatalf("spans %v, want 1 run, 1 end, 2 activations, 3 steps", names)
	}
}
