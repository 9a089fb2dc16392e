package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// logSink is a log sink safe for the handler's goroutines.
type logSink struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logSink) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records are the JSON records logged with log=kind.
func (b *logSink) records(kind string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(b.buf.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["log"] == kind {
			out = append(out, rec)
		}
	}
	return out
}

type traced struct {
	srv   *httptest.Server
	eng   *engine.Engine
	spans *tracetest.InMemoryExporter
	logs  *logSink
	token string
}

// setupTraced serves the API and the engine with one TracerProvider into memory and the
// handler's records into a buffer.
func setupTraced(t *testing.T) *traced {
	t.Helper()
	ctx := context.Background()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans), sdktrace.WithIDGenerator(engine.TraceIDGenerator()))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	st := openStore(t, onPostgres)
	logs := &logSink{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	eng, err := engine.New(engine.Config{Store: st, Runtime: testenv.Runtime(t), LeaseFor: 3 * time.Second, PollInterval: time.Second,
		TracerProvider: tp, Logger: log, SecretKeys: testenv.SecretKeys(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Config{Service: eng.Service, Store: st, AdminToken: adminToken, Logger: log, TracerProvider: tp}))
	t.Cleanup(func() {
		srv.Close()
		eng.Stop()
	})
	const token = "traced-tenant-token"
	if err := eng.EnsureToken(ctx, store.DefaultTenant, token, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Deploy(ctx, store.DefaultTenant, testenv.Fixture(t, "examples.wasm"), false); err != nil {
		t.Fatal(err)
	}
	return &traced{srv: srv, eng: eng, spans: spans, logs: logs, token: token}
}

func (e *traced) span(name string, where func(tracetest.SpanStub) bool) (tracetest.SpanStub, bool) {
	for _, s := range e.spans.GetSpans() {
		if s.Name == name && (where == nil || where(s)) {
			return s, true
		}
	}
	return tracetest.SpanStub{}, false
}

func linksTo(s tracetest.SpanStub, sc trace.SpanContext) bool {
	for _, l := range s.Links {
		if l.SpanContext.TraceID() == sc.TraceID() && l.SpanContext.SpanID() == sc.SpanID() {
			return true
		}
	}
	return false
}

const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

// TestTraceparentOnStartAndSignal: a start and a signal carrying a traceparent are served in
// server spans of the caller's trace; the start's workflow.start span there links the run's
// trace, whose signal span links the caller's; a broadcast's span links the runs it started.
func TestTraceparentOnStartAndSignal(t *testing.T) {
	t.Parallel()
	e := setupTraced(t)
	parent := map[string]string{"traceparent": "00-" + callerTrace + "-" + callerSpan + "-01"}
	r := callWith(t, e.srv, "POST", "/v1/workflows/onboarding/runs", e.token, []byte(`{"input":{"email":"tp@example.com","delayMs":1,"verifyTimeoutMs":600000}}`), parent)
	if r.status != 201 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	runID := r.json(t)["id"].(string)

	server, ok := e.span("POST /v1/workflows/{name}/runs", nil)
	if !ok {
		t.Fatal("no server span of the start")
	}
	if server.SpanKind != trace.SpanKindServer || server.SpanContext.TraceID().String() != callerTrace || server.Parent.SpanID().String() != callerSpan {
		t.Fatalf("the start's server span: kind %v trace %s parent %s, want a server span under the traceparent", server.SpanKind, server.SpanContext.TraceID(), server.Parent.SpanID())
	}
	var status int64
	for _, kv := range server.Attributes {
		if kv.Key == "http.response.status_code" {
			status = kv.Value.AsInt64()
		}
	}
	if status != 201 {
		t.Fatalf("server span status %d, want 201", status)
	}
	start, ok := e.span("workflow.start", nil)
	if !ok || start.Parent.SpanID() != server.SpanContext.SpanID() || start.SpanContext.TraceID().String() != callerTrace {
		t.Fatalf("workflow.start: found %v, parent %s, want the server span %s", ok, start.Parent.SpanID(), server.SpanContext.SpanID())
	}
	if len(start.Links) != 1 || start.Links[0].SpanContext.TraceID().String() != engine.TraceIDOf(runID) {
		t.Fatalf("workflow.start links %v, want the run's trace %s", start.Links, engine.TraceIDOf(runID))
	}

	runPath := "/v1/workflows/onboarding/runs/" + runID
	var userID string
	testenv.Await(t, 30*time.Second, func() error {
		steps, _ := call(t, e.srv, "GET", runPath+"/steps", e.token, nil).json(t)["steps"].([]any)
		if len(steps) != 4 {
			return fmt.Errorf("the run has not reached its wait: %d steps", len(steps))
		}
		userID = steps[0].(map[string]any)["output"].(map[string]any)["id"].(string)
		return nil
	})
	sigParent := map[string]string{"traceparent": "00-" + callerTrace + "-1111111111111111-01"}
	if sig := callWith(t, e.srv, "POST", runPath+"/signals/verify", e.token, []byte(`{"userId":"`+userID+`"}`), sigParent); sig.status != 202 {
		t.Fatalf("signal: %d %s", sig.status, sig.body)
	}
	sigServer, ok := e.span("POST /v1/workflows/{name}/runs/{id}/signals/{event}", nil)
	if !ok || sigServer.Parent.SpanID().String() != "1111111111111111" {
		t.Fatalf("the signal's server span: found %v parent %s", ok, sigServer.Parent.SpanID())
	}
	signal, ok := e.span("workflow.signal", nil)
	if !ok || signal.SpanContext.TraceID().String() != engine.TraceIDOf(runID) || !linksTo(signal, sigServer.SpanContext) {
		t.Fatalf("workflow.signal: found %v in trace %s with links %v; want the run's trace linking the caller's server span", ok, signal.SpanContext.TraceID(), signal.Links)
	}

	// A broadcast that starts a run (onboarding's trigger) links the run it started.
	b := callWith(t, e.srv, "POST", "/v1/events/user.signed_up", e.token, []byte(`{"email":"b@example.com","delayMs":1,"verifyTimeoutMs":1}`), nil)
	if b.status != 202 && b.status != 200 {
		t.Fatalf("broadcast: %d %s", b.status, b.body)
	}
	started, _ := b.json(t)["started"].([]any)
	if len(started) != 1 {
		t.Fatalf("broadcast started %v, want 1 run", b.json(t))
	}
	startedID := started[0].(map[string]any)["id"].(string)
	bspan, ok := e.span("workflow.signal", func(s tracetest.SpanStub) bool { return s.SpanContext.TraceID().String() != engine.TraceIDOf(runID) })
	if !ok || !linksTo(bspan, trace.NewSpanContext(trace.SpanContextConfig{TraceID: mustTraceID(t, engine.TraceIDOf(startedID)), SpanID: rootSpanID(t, e, startedID)})) {
		t.Fatalf("the broadcast's span: found %v, links %v; want one to run %s", ok, bspan.Links, startedID)
	}
}

func mustTraceID(t *testing.T, s string) trace.TraceID {
	id, err := trace.TraceIDFromHex(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// rootSpanID is the span id of a run's workflow.run span, once its first activation made it.
func rootSpanID(t *testing.T, e *traced, runID string) trace.SpanID {
	var id trace.SpanID
	testenv.Await(t, 30*time.Second, func() error {
		s, ok := e.span("workflow.run", func(s tracetest.SpanStub) bool { return s.SpanContext.TraceID().String() == engine.TraceIDOf(runID) })
		if !ok {
			return fmt.Errorf("no workflow.run span of run %s yet", runID)
		}
		id = s.SpanContext.SpanID()
		return nil
	})
	return id
}

// TestAccessAndAuditLogs: every request is one access record (route, status, actor, never
// the body); every attempt at an administrative change (a deploy, a tenant, a token, a
// secret) is one audit record with its outcome, refused ones included; a hostile path is cut.
func TestAccessAndAuditLogs(t *testing.T) {
	t.Parallel()
	e := setupTraced(t)
	if r := call(t, e.srv, "POST", "/v1/tenants", adminToken, []byte(`{"id":"audited"}`)); r.status != 201 {
		t.Fatalf("create tenant: %d %s", r.status, r.body)
	}
	if r := call(t, e.srv, "POST", "/v1/tenants", "not-the-admin-token", []byte(`{"id":"sneaky"}`)); r.status != 401 {
		t.Fatalf("create tenant without the admin token: %d %s", r.status, r.body)
	}
	if r := call(t, e.srv, "POST", "/v1/tokens", e.token, []byte(`{"name":"ci"}`)); r.status != 201 {
		t.Fatalf("create token: %d %s", r.status, r.body)
	}
	if r := call(t, e.srv, "PUT", "/v1/secrets/api-key", e.token, []byte(`{"value":"s3cr3t-value"}`)); r.status/100 != 2 {
		t.Fatalf("put secret: %d %s", r.status, r.body)
	}
	if r := call(t, e.srv, "POST", "/v1/modules", e.token, testenv.Fixture(t, "hostile.wasm")); r.status != 201 {
		t.Fatalf("deploy: %d %s", r.status, r.body)
	}
	hostile := "/v1/secrets/" + strings.Repeat("x", 4000)
	call(t, e.srv, "DELETE", hostile, e.token, nil)
	call(t, e.srv, "GET", "/v1/runs", e.token, nil)

	audits := e.logs.records("audit")
	want := []string{"tenant.create done admin audited", "tenant.create refused unauthenticated ", "token.create done tenant:default default",
		"secret.put done tenant:default default", "module.deploy done tenant:default default", "secret.delete refused tenant:default default"}
	var got []string
	for _, a := range audits {
		tenant, _ := a["tenant"].(string)
		got = append(got, fmt.Sprintf("%s %s %s %s", a["action"], a["outcome"], a["actor"], tenant))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if audits[3]["secret"] != "api-key" {
		t.Fatalf("secret.put names %v, want api-key", audits[3]["secret"])
	}
	if d, _ := audits[4]["digest"].(string); len(d) != 64 || !strings.Contains(fmt.Sprint(audits[4]["workflows"]), "trap@") {
		t.Fatalf("module.deploy record: %v, want the digest and the workflows", audits[4])
	}
	if id, _ := audits[2]["token"].(string); id == "" {
		t.Fatalf("token.create record names no token id: %v", audits[2])
	}
	if name, _ := audits[5]["secret"].(string); len(name) > 600 || !strings.HasSuffix(name, "(cut)") {
		t.Fatalf("a 4,000-byte secret name logged as %d bytes, want it cut", len(name))
	}

	access := e.logs.records("access")
	var runs map[string]any
	for _, a := range access {
		if a["route"] == "GET /v1/runs" {
			runs = a
		}
	}
	if runs == nil || runs["status"] != float64(200) || runs["actor"] != "tenant" || runs["tenant"] != "default" || runs["level"] != "INFO" {
		t.Fatalf("access record of GET /v1/runs: %v", runs)
	}
	if len(access) < 7 {
		t.Fatalf("%d access records for 7 requests", len(access))
	}
	all := e.logs.buf.String()
	for _, secret := range []string{"s3cr3t-value", e.token} {
		if strings.Contains(all, secret) {
			t.Fatalf("the logs carry %q", secret)
		}
	}
}
