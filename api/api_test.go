package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/api/client"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
	"github.com/wfhost/wfhost/store/postgres"
)

// adminToken is the admin token of every test server.
const adminToken = "test-admin-token"

// env is a served API over a started engine on a store of the test's own: a Postgres schema or
// an embedded store in a temporary directory.
type env struct {
	srv     *httptest.Server
	eng     *engine.Engine
	st      store.Store
	handler *api.Handler
	// errorsLogged counts the records the handler logged at level error: every one is a 500.
	errorsLogged *atomic.Int64
}

// storeKind names a store implementation the API is tested on.
type storeKind string

const (
	onPostgres storeKind = "postgres"
	onEmbedded storeKind = "embedded"
)

// bothStores are the stores a test that is about what the stores accept runs on.
var bothStores = []storeKind{onPostgres, onEmbedded}

// openStore opens a migrated store of the kind, closed when the test ends.
func openStore(t testing.TB, kind storeKind) store.Store {
	t.Helper()
	ctx := context.Background()
	var st store.Store
	switch kind {
	case onPostgres:
		pg, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: testenv.Schema(t, "wfhost_api"), MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		if err := pg.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		st = pg
	case onEmbedded:
		em, err := embedded.Open(ctx, embedded.Config{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		st = em
	default:
		t.Fatalf("unknown store kind %q", kind)
	}
	t.Cleanup(st.Close)
	return st
}

// setup serves the API with the example modules deployed to the default tenant, whose token
// it returns.
func setup(t testing.TB) (*httptest.Server, string) {
	t.Helper()
	e := setupEnv(t, store.Limits{})
	const token = "default-tenant-token"
	if err := e.eng.EnsureToken(context.Background(), store.DefaultTenant, token, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.eng.Deploy(context.Background(), store.DefaultTenant, testenv.Fixture(t, "examples.wasm"), false); err != nil {
		t.Fatal(err)
	}
	return e.srv, token
}

func setupEnv(t testing.TB, defaults store.Limits) *env {
	t.Helper()
	return setupEnvOn(t, onPostgres, defaults)
}

// setupEnvOn serves the API over a started engine on a new store of the kind.
func setupEnvOn(t testing.TB, kind storeKind, defaults store.Limits) *env {
	t.Helper()
	return setupEnvWrapped(t, kind, defaults, nil)
}

// setupEnvWrapped is setupEnvOn whose engine and handler use wrap(the store) when wrap is
// set: the real store with some calls counted.
func setupEnvWrapped(t testing.TB, kind storeKind, defaults store.Limits, wrap func(store.Store) store.Store) *env {
	t.Helper()
	ctx := context.Background()
	rt := testenv.Runtime(t)
	st := openStore(t, kind)
	if wrap != nil {
		st = wrap(st)
	}
	// The activation wall time stays the engine's default: no test here is about it, and the
	// 5 s it was is the likely cause of a run that never reached its wait on a loaded CI
	// machine under the race detector (the failure now prints the run).
	eng, err := engine.New(engine.Config{Store: st, Runtime: rt, LeaseFor: 3 * time.Second, PollInterval: time.Second,
		TenantDefaults: defaults, MaxRetentionDays: 90,
		// The capability tests call an HTTP server of their own on loopback.
		AllowPrivateHosts: true, SecretKeys: testenv.SecretKeys(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	errorsLogged := new(atomic.Int64)
	logger := slog.New(errorCounter{Handler: slog.DiscardHandler, n: errorsLogged})
	// 16 MiB: the capabilities fixture links net/http and is about 11 MB.
	handler := api.New(api.Config{Service: eng.Service, Store: st, AdminToken: adminToken, MaxBodyBytes: 64 << 10, MaxModuleBytes: 16 << 20,
		Logger: logger, Ready: func(ctx context.Context) error { return st.(api.StoreHealth).Ping(ctx) }})
	srv := httptest.NewServer(contract(t, handler))
	t.Cleanup(func() {
		srv.Close()
		eng.Stop()
	})
	return &env{srv: srv, eng: eng, st: st, handler: handler, errorsLogged: errorsLogged}
}

// errorCounter is a slog handler that counts the records logged at level error.
type errorCounter struct {
	slog.Handler
	n *atomic.Int64
}

func (h errorCounter) Enabled(_ context.Context, level slog.Level) bool {
	return level >= slog.LevelError
}

func (h errorCounter) Handle(_ context.Context, r slog.Record) error {
	h.n.Add(1)
	return nil
}

func (h errorCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h errorCounter) WithGroup(string) slog.Handler      { return h }

type response struct {
	status int
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %s", r.body)
	}
	return m
}

func (r response) errorCode(t testing.TB) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	code, _ := e["code"].(string)
	if code == "" || e["message"] == "" {
		t.Fatalf("error response without code and message: %s", r.body)
	}
	return code
}

func call(t testing.TB, srv *httptest.Server, method, path, token string, body []byte) response {
	t.Helper()
	return callWith(t, srv, method, path, token, body, nil)
}

// callWith is call with extra request headers.
func callWith(t testing.TB, srv *httptest.Server, method, path, token string, body []byte, header map[string]string) response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", contentTypeOf(path))
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, out}
}

// contentTypeOf is the media type of a body sent to path, as api/client sends it: modules are
// WebAssembly, everything else JSON.
func contentTypeOf(path string) string {
	if strings.HasPrefix(path, "/v1/modules") || strings.HasSuffix(path, "/replay") {
		return "application/wasm"
	}
	return "application/json"
}

func TestRunLifecycleOverHTTP(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	r := call(t, srv, "POST", "/v1/workflows/onboarding/runs", tok, []byte(`{"input":{"email":"a@b.c","delayMs":1,"verifyTimeoutMs":600000},"idempotencyKey":"k1"}`))
	if r.status != 201 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	id := r.json(t)["id"].(string)
	if again := call(t, srv, "POST", "/v1/workflows/onboarding/runs", tok, []byte(`{"input":{},"idempotencyKey":"k1"}`)); again.status != 200 || again.json(t)["id"] != id {
		t.Fatalf("idempotent start: %d %s", again.status, again.body)
	}
	runPath := "/v1/workflows/onboarding/runs/" + id
	var userID string
	testenv.Await(t, 30*time.Second, func() error {
		steps := call(t, srv, "GET", runPath+"/steps", tok, nil).json(t)["steps"].([]any)
		if len(steps) != 4 {
			return fmt.Errorf("the run has not reached its wait: %d steps; run %s", len(steps), call(t, srv, "GET", runPath, tok, nil).body)
		}
		userID = steps[0].(map[string]any)["output"].(map[string]any)["id"].(string)
		return nil
	})
	if r := call(t, srv, "GET", "/v1/workflows/poll/runs/"+id, tok, nil); r.status != 404 || r.errorCode(t) != "not_found" {
		t.Fatalf("a run under another workflow's path: %d %s", r.status, r.body)
	}
	sig := call(t, srv, "POST", runPath+"/signals/verify?signalId=s-1", tok, []byte(`{"userId":"`+userID+`","via":"http"}`))
	if sig.status != 202 || sig.json(t)["state"] != "delivered" || sig.json(t)["duplicate"] != false || sig.json(t)["signalId"] != "s-1" {
		t.Fatalf("signal: %d %s", sig.status, sig.body)
	}
	// A retried signal (the same id, as the Idempotency-Key header) is acknowledged, not sent
	// again: the buffer stays empty, which the run's end below shows too.
	repeat := func() response {
		return callWith(t, srv, "POST", runPath+"/signals/verify", tok, []byte(`{"userId":"`+userID+`","via":"retry"}`),
			map[string]string{"Idempotency-Key": "s-1"})
	}
	if again := repeat(); again.status != 200 || again.json(t)["state"] != "delivered" || again.json(t)["duplicate"] != true {
		t.Fatalf("repeated signal: %d %s", again.status, again.body)
	}
	testenv.Await(t, 30*time.Second, func() error {
		run := call(t, srv, "GET", runPath, tok, nil).json(t)
		if run["status"] != "completed" {
			return fmt.Errorf("run is %v", run["status"])
		}
		if !strings.Contains(string(mustJSON(run["output"])), "verified via http") {
			t.Fatalf("output %v", run["output"])
		}
		return nil
	})
	if r := call(t, srv, "DELETE", runPath, tok, nil); r.status != 409 || r.errorCode(t) != "conflict" {
		t.Fatalf("cancel a completed run: %d %s", r.status, r.body)
	}
	if again := repeat(); again.status != 200 || again.json(t)["duplicate"] != true {
		t.Fatalf("a repeated signal to the completed run: %d %s", again.status, again.body)
	}
	if r := call(t, srv, "POST", runPath+"/signals/verify?signalId=s-2", tok, []byte(`{}`)); r.status != 409 || r.errorCode(t) != "conflict" {
		t.Fatalf("a new signal to the completed run: %d %s", r.status, r.body)
	}
	list := call(t, srv, "GET", "/v1/workflows/onboarding/runs?limit=10", tok, nil).json(t)
	if runs := list["runs"].([]any); len(runs) != 1 {
		t.Fatalf("list: %v", list)
	}
	wfs := call(t, srv, "GET", "/v1/workflows", tok, nil)
	if !strings.Contains(string(wfs.body), `"completed":1`) {
		t.Fatalf("workflows: %s", wfs.body)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func TestBadRequestsGetClearErrors(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	// Past the server's body cap and past what the tenant's input limit (1 MiB) lets a body
	// grow to (Handler.bodyLimit).
	big := bytes.Repeat([]byte("a"), 1<<20+100<<10)
	cases := []struct {
		name, method, path string
		body               []byte
		status             int
		code               string
	}{
		{"malformed JSON", "POST", "/v1/workflows/steps/runs", []byte(`{"input":`), 400, "invalid_json"},
		{"unknown field", "POST", "/v1/workflows/steps/runs", []byte(`{"inptu":{}}`), 400, "invalid_json"},
		{"two values", "POST", "/v1/workflows/steps/runs", []byte(`{} {}`), 400, "invalid_json"},
		{"oversized body", "POST", "/v1/workflows/steps/runs", append(append([]byte(`{"input":"`), big...), '"', '}'), 413, "too_large"},
		{"unknown workflow", "POST", "/v1/workflows/nope/runs", []byte(`{}`), 404, "not_found"},
		{"unknown version", "POST", "/v1/workflows/steps/runs", []byte(`{"version":"9"}`), 404, "not_found"},
		{"negative retention", "POST", "/v1/workflows/steps/runs", []byte(`{"retentionDays":-1}`), 400, "invalid_request"},
		{"run id not a uuid", "GET", "/v1/workflows/steps/runs/not-a-uuid", nil, 404, "not_found"},
		{"unknown run", "GET", "/v1/workflows/steps/runs/00000000-0000-0000-0000-000000000000", nil, 404, "not_found"},
		{"bad limit", "GET", "/v1/workflows/steps/runs?limit=0", nil, 400, "invalid_request"},
		{"bad status", "GET", "/v1/workflows/steps/runs?status=weird", nil, 400, "invalid_request"},
		{"bad cursor", "GET", "/v1/workflows/steps/runs?cursor=garbage", nil, 400, "invalid_request"},
		{"invalid module", "POST", "/v1/modules", []byte("not wasm"), 400, "invalid_request"},
		{"empty module", "POST", "/v1/modules", nil, 400, "invalid_request"},
		{"module too large", "POST", "/v1/modules", bytes.Repeat([]byte{0}, 17<<20), 413, "too_large"},
		{"bad replace flag", "POST", "/v1/modules?replace=maybe", []byte("x"), 400, "invalid_request"},
		{"event payload not JSON", "POST", "/v1/events/verify", []byte(`{nope`), 400, "invalid_json"},
		{"unknown route", "GET", "/v2/anything", nil, 404, "not_found"},
		{"wrong method", "PUT", "/v1/modules", nil, 405, "method_not_allowed"},
		{"signal unknown run", "POST", "/v1/workflows/steps/runs/00000000-0000-0000-0000-000000000000/signals/x", []byte(`{}`), 404, "not_found"},
	}
	for _, c := range cases {
		r := call(t, srv, c.method, c.path, tok, c.body)
		if r.status != c.status || r.errorCode(t) != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, c.code)
		}
	}
}

func TestTokenIsRequired(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	for _, bad := range []string{"", "wrong", tok[:len(tok)-1], adminToken} {
		if r := call(t, srv, "GET", "/v1/workflows", bad, nil); r.status != 401 || r.errorCode(t) != "unauthorized" {
			t.Fatalf("token %q: %d %s", bad, r.status, r.body)
		}
	}
	if r := call(t, srv, "GET", "/v1/workflows", tok, nil); r.status != 200 {
		t.Fatalf("good token: %d %s", r.status, r.body)
	}
	// Health endpoints and the API description answer without a token, for probes and tools.
	for _, path := range []string{"/healthz", "/readyz", "/v1/openapi.json"} {
		if r := call(t, srv, "GET", path, "", nil); r.status != 200 {
			t.Fatalf("%s: %d", path, r.status)
		}
	}
}

// fuzzRequest is a request template of FuzzAPI whose placeholders take the fuzzer's value: {s}
// as a JSON string (raw bytes, or every two bytes as one \u escape), {n} as JSON text, {p} as a
// path segment, {q} as a query value, and {run} is the path of a live run.
type fuzzRequest struct {
	method, path, body string
	admin              bool
}

// fuzzRequests put the fuzzer's value in every string field of every endpoint, every path
// parameter, every query parameter and every number.
var fuzzRequests = []fuzzRequest{
	{"POST", "/v1/workflows/onboarding/runs", `{"input":{s}}`, false},
	{"POST", "/v1/workflows/onboarding/runs", `{"input":{"email":{s},"n":[{s}]}}`, false},
	{"POST", "/v1/workflows/onboarding/runs", `{"input":{{s}:1}}`, false},
	{"POST", "/v1/workflows/onboarding/runs", `{"version":{s}}`, false},
	{"POST", "/v1/workflows/onboarding/runs", `{"idempotencyKey":{s}}`, false},
	{"POST", "/v1/workflows/onboarding/runs", `{"input":{n},"retentionDays":{n}}`, false},
	{"POST", "/v1/workflows/onboarding/runs", `{{s}:{}}`, false},
	{"POST", "/v1/workflows/{p}/runs", `{}`, false},
	{"GET", "/v1/workflows/{p}/runs", ``, false},
	{"GET", "/v1/runs?input.a={q}", ``, false},
	{"GET", "/v1/runs?input.{q}=1", ``, false},
	{"GET", "/v1/runs?status={q}&limit={q}", ``, false},
	{"GET", "/v1/runs?since={q}&until={q}", ``, false},
	{"GET", "/v1/workflows/onboarding/runs?cursor={q}", ``, false},
	{"GET", "/v1/runs?{q}={q}", ``, false},
	{"GET", "/v1/workflows/onboarding/runs/{p}", ``, false},
	{"DELETE", "/v1/workflows/onboarding/runs/{p}/steps", ``, false},
	{"POST", "/v1/workflows/onboarding/runs/{p}/signals/verify", `{}`, false},
	{"POST", "{run}/signals/{p}", `{}`, false},
	{"POST", "{run}/signals/verify", `{s}`, false},
	{"POST", "{run}/signals/verify", `{"userId":{s}}`, false},
	{"POST", "{run}/signals/verify", `{n}`, false},
	{"POST", "/v1/events/{p}", `{}`, false},
	{"POST", "/v1/events/verify", `{s}`, false},
	{"POST", "/v1/events/verify", `[{"userId":{s}},{{s}:{n}}]`, false},
	{"POST", "/v1/events/verify?eventId={q}", `{}`, false},
	{"POST", "/v1/tokens", `{"name":{s}}`, false},
	{"DELETE", "/v1/tokens/{p}", ``, false},
	{"PUT", "/v1/secrets/{p}", `{"value":"v"}`, false},
	{"PUT", "/v1/secrets/s", `{"value":{s}}`, false},
	{"DELETE", "/v1/secrets/{p}", ``, false},
	{"POST", "/v1/modules?replace={q}", ``, false},
	{"POST", "/v1/tenants", `{"id":{s}}`, true},
	{"POST", "/v1/tenants", `{"id":"fuzz","limits":{"allowedHosts":[{s}],"concurrency":{n}}}`, true},
	{"PATCH", "/v1/tenants/{p}", `{"limits":{}}`, true},
	{"PATCH", "/v1/tenants/acme", `{"limits":{"allowedHosts":[{s}]}}`, true},
	{"PATCH", "/v1/tenants/acme", `{"limits":{"memoryPages":{n},"maxInputBytes":{n},"activationTimeoutMs":{n}}}`, true},
	{"GET", "/v1/tenants/{p}", ``, true},
	{"GET", "/v1/tenants/{p}/tokens", ``, true},
	{"POST", "/v1/tenants/acme/tokens", `{"name":{s}}`, true},
	{"DELETE", "/v1/tenants/acme/tokens/{p}", ``, true},
	{"GET", "/v1/tenants/{p}/secrets", ``, true},
	{"PUT", "/v1/tenants/acme/secrets/{p}", `{"value":"v"}`, true},
	{"PUT", "/v1/tenants/acme/secrets/s", `{"value":{s}}`, true},
}

// fill makes the template a request for run with the fuzzer's value.
func (fr fuzzRequest) fill(run, value string, escaped bool) (path, body string) {
	str := `"` + value + `"`
	if escaped {
		var b strings.Builder
		b.WriteByte('"')
		for i := 0; i < len(value); i += 2 {
			unit := uint16(value[i]) << 8
			if i+1 < len(value) {
				unit |= uint16(value[i+1])
			}
			fmt.Fprintf(&b, `\u%04x`, unit)
		}
		b.WriteByte('"')
		str = b.String()
	}
	path = strings.NewReplacer("{run}", run, "{p}", url.PathEscape(value), "{q}", url.QueryEscape(value)).Replace(fr.path)
	body = strings.NewReplacer("{s}", str, "{n}", value).Replace(fr.body)
	return path, body
}

// FuzzAPI throws requests at the API on both stores: arbitrary methods, paths, bodies and
// media types, and the templates of fuzzRequests with the fuzzer's bytes (invalid UTF-8, NUL,
// surrogates, raw and as \u escapes) in every string field, path and query parameter and
// number. Every answer is JSON, and never a 5xx.
func FuzzAPI(f *testing.F) {
	seeds := []struct{ method, path, body string }{
		{"POST", "/v1/workflows/steps/runs", `{"input":{"n":1}}`},
		{"POST", "/v1/workflows/steps/runs", `{"input":`},
		{"GET", "/v1/workflows/steps/runs?limit=5&cursor=abc", ``},
		{"POST", "/v1/events/x", `[1,2,3]`},
		{"POST", "/v1/modules", "\x00asm\x01\x00\x00\x00"},
		{"DELETE", "/v1/workflows/a/runs/b", ``},
		{"POST", "/v1/tenants", `{"id":"t1","limits":{"memoryPages":-1}}`},
		{"PATCH", "/v1/tenants/default", `{"limits":{"concurrency":5}}`},
		{"GET", "/v1/runs?input.a.b=1&since=2026-01-01T00:00:00Z", ``},
		{"DELETE", "/v1/tokens/tok_1", ``},
		{"POST", "/v1/workflows/%00/runs", `{}`},
		{"GET", "/v1/workflows/%00/runs", ``},
		{"POST", "/v1/workflows/steps/runs", `{"Input":{},"input":{},"retentionDays":2147483648}`},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.body, uint8(0), "", false)
	}
	for i := range fuzzRequests {
		for _, v := range []string{"a\x00b", "\xff", "\xed\xa0\x80", "\xc0\x80", "x", "1e400", "-1", "2147483648"} {
			f.Add("", "", "", uint8(i+1), v, false)
		}
		for _, v := range []string{"\x00\x00", "\xd8\x00", "\xdc\x00", "\xd8\x3d\xde\x00", "\x00\x41\xd8\x00"} {
			f.Add("", "", "", uint8(i+1), v, true)
		}
	}
	type target struct {
		srv, run, token string
		client          *http.Client
	}
	var targets []target
	for _, kind := range bothStores {
		// One activation at a time, and short runs: the fuzzer starts many.
		e := setupEnvOn(f, kind, store.Limits{Concurrency: 1, MaxStepsPerRun: 20})
		const token = "default-tenant-token"
		ctx := context.Background()
		if err := e.eng.EnsureToken(ctx, store.DefaultTenant, token, "test"); err != nil {
			f.Fatal(err)
		}
		if _, err := e.eng.Deploy(ctx, store.DefaultTenant, testenv.Fixture(f, "examples.wasm"), false); err != nil {
			f.Fatal(err)
		}
		if _, _, _, err := e.eng.CreateTenant(ctx, "acme", store.Limits{}); err != nil {
			f.Fatal(err)
		}
		run, _, err := e.eng.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "onboarding",
			Input: json.RawMessage(`{"email":"a@example.com","delayMs":1,"verifyTimeoutMs":3600000}`)})
		if err != nil {
			f.Fatal(err)
		}
		targets = append(targets, target{srv: e.srv.URL, run: client.RunPath("onboarding", run.ID), token: token, client: e.srv.Client()})
	}
	f.Fuzz(func(t *testing.T, method, path, body string, template uint8, value string, escaped bool) {
		for _, tg := range targets {
			admin, contentType := len(body)%2 == 1, "application/json"
			reqPath, reqBody := path, body
			if template != 0 {
				fr := fuzzRequests[int(template-1)%len(fuzzRequests)]
				method, admin = fr.method, fr.admin
				reqPath, reqBody = fr.fill(tg.run, value, escaped)
			} else if escaped {
				contentType = value // arbitrary media types too
			}
			if strings.HasPrefix(reqPath, "/v1/modules") {
				contentType = "application/wasm"
			}
			if !strings.HasPrefix(reqPath, "/") {
				return
			}
			req, err := http.NewRequest(method, tg.srv+reqPath, strings.NewReader(reqBody))
			if err != nil {
				return // not a request a client can send
			}
			req.Header.Set("Authorization", "Bearer "+tg.token)
			if admin {
				req.Header.Set("Authorization", "Bearer "+adminToken)
			}
			if reqBody != "" {
				req.Header.Set("Content-Type", contentType)
			}
			resp, err := tg.client.Do(req)
			if err != nil {
				return // refused by the client (an invalid header value) or by the server's HTTP layer
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 500 {
				t.Fatalf("%s %s with %q: %d %s", method, reqPath, reqBody, resp.StatusCode, out)
			}
		}
	})
}

// Signal-with-start over HTTP: the first request starts the run named by the key with the
// event kept for it; one while the run is open signals it; one after it ended starts another.
func TestSignalWithStartOverHTTP(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	sum := sha256.Sum256([]byte("sws@example.com"))
	userID := fmt.Sprintf("u-%x", sum[:6])
	body := func(payload string) []byte {
		return []byte(`{"idempotencyKey":"signup-7","input":{"email":"sws@example.com","delayMs":1,"verifyTimeoutMs":600000},"event":"verify","payload":` + payload + `}`)
	}
	first := call(t, srv, "POST", "/v1/workflows/onboarding/signal-with-start", tok, body(`{"userId":"someone-else"}`))
	if first.status != 201 || first.json(t)["created"] != true {
		t.Fatalf("first signal-with-start: %d %s", first.status, first.body)
	}
	run := first.json(t)["run"].(map[string]any)
	if sig := first.json(t)["signal"].(map[string]any); sig["state"] != "buffered" || run["idempotencyKey"] != "signup-7" {
		t.Fatalf("first signal-with-start: %s", first.body)
	}
	runPath := "/v1/workflows/onboarding/runs/" + run["id"].(string)
	if trig, _ := call(t, srv, "GET", runPath, tok, nil).json(t)["triggeredBy"].(map[string]any); trig["kind"] != "signalWithStart" || trig["event"] != "verify" {
		t.Fatalf("the started run's triggeredBy: %v", trig)
	}
	// The kept event does not match the run's wait, which goes on waiting.
	testenv.Await(t, 30*time.Second, func() error {
		steps := call(t, srv, "GET", runPath+"/steps", tok, nil).json(t)["steps"].([]any)
		if len(steps) != 4 || steps[3].(map[string]any)["status"] != "waiting" {
			return fmt.Errorf("the run is not waiting: %v", steps)
		}
		return nil
	})
	second := call(t, srv, "POST", "/v1/workflows/onboarding/signal-with-start", tok, body(`{"userId":"`+userID+`","via":"sws"}`))
	if second.status != 200 || second.json(t)["created"] != false || second.json(t)["run"].(map[string]any)["id"] != run["id"] ||
		second.json(t)["signal"].(map[string]any)["state"] != "delivered" {
		t.Fatalf("signal-with-start to the open run: %d %s", second.status, second.body)
	}
	testenv.Await(t, 30*time.Second, func() error {
		if got := call(t, srv, "GET", runPath, tok, nil).json(t); got["status"] != "completed" {
			return fmt.Errorf("run is %v", got["status"])
		}
		return nil
	})
	third := call(t, srv, "POST", "/v1/workflows/onboarding/signal-with-start", tok, body(`{"userId":"`+userID+`"}`))
	if third.status != 201 || third.json(t)["run"].(map[string]any)["id"] == run["id"] {
		t.Fatalf("signal-with-start after the run ended: %d %s", third.status, third.body)
	}
	if ended := call(t, srv, "GET", runPath, tok, nil).json(t); ended["status"] != "completed" || ended["idempotencyKey"] != nil {
		t.Fatalf("the ended run: %v, want completed without its key", ended)
	}

	for _, c := range []struct {
		name, path, body string
		status           int
	}{
		{"no key", "/v1/workflows/onboarding/signal-with-start", `{"event":"verify"}`, 400},
		{"no event", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"k"}`, 400},
		{"no body", "/v1/workflows/onboarding/signal-with-start", ``, 400},
		{"an unknown field", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"k","event":"verify","runId":"x"}`, 400},
		{"a payload with a duplicate key", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"k","event":"verify","payload":{"a":1,"a":2}}`, 400},
		{"an unknown workflow", "/v1/workflows/nope/signal-with-start", `{"idempotencyKey":"k","event":"verify"}`, 404},
		{"a key with a NUL", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"a\u0000b","event":"verify"}`, 400},
		{"a signal id over 200 bytes", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"k","event":"verify","signalId":"` + strings.Repeat("s", 201) + `"}`, 400},
	} {
		if r := call(t, srv, "POST", c.path, tok, []byte(c.body)); r.status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, r.status, r.body, c.status)
		} else {
			r.errorCode(t)
		}
	}
}

// TestATenantsLimitsSizeItsRequestBodies: a JSON body may be as large as the tenant's limits
// allow its input to be (and a little more for the request's own fields), past the 2 MiB every
// tenant gets; past that it is refused with 413.
func TestATenantsLimitsSizeItsRequestBodies(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{MaxInputBytes: 4 << 20})
	const token = "default-tenant-token"
	if err := e.eng.EnsureToken(context.Background(), store.DefaultTenant, token, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.eng.Deploy(context.Background(), store.DefaultTenant, testenv.Fixture(t, "examples.wasm"), false); err != nil {
		t.Fatal(err)
	}
	body := func(n int) []byte { return []byte(`{"input":{"pad":"` + strings.Repeat("x", n) + `"}}`) }
	if r := call(t, e.srv, "POST", "/v1/workflows/steps/runs", token, body(3<<20)); r.status != 201 {
		t.Fatalf("a 3 MiB input within the tenant's 4 MiB: %d %.300s", r.status, r.body)
	}
	if r := call(t, e.srv, "POST", "/v1/workflows/steps/runs", token, body(5<<20)); r.status != 413 {
		t.Fatalf("a 5 MiB body past the tenant's 4 MiB: %d %.300s", r.status, r.body)
	}
	// Every JSON answer says what it is, for the console served from the same origin.
	req, _ := http.NewRequest("GET", e.srv.URL+"/v1/workflows", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Fatalf("X-Content-Type-Options %q on a JSON answer, want nosniff", got)
	}
}

// TestAwaitARunWithOneRequest: GET .../runs/{id}?wait=N answers when the run has ended, or
// after N seconds with the run as it stands; a client needs no polling loop.
func TestAwaitARunWithOneRequest(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	r := call(t, srv, "POST", "/v1/workflows/steps/runs", tok, []byte(`{"input":{"n":3,"sleepMs":300}}`))
	if r.status != 201 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	path := "/v1/workflows/steps/runs/" + r.json(t)["id"].(string)
	if got := call(t, srv, "GET", path+"?wait=30", tok, nil); got.status != 200 || got.json(t)["status"] != "completed" {
		t.Fatalf("a long poll of a run that ends within it: %d %s", got.status, got.body)
	}
	// A run that waits for an event does not end within a second: the answer is the run as it
	// stands once the second is over.
	w := call(t, srv, "POST", "/v1/workflows/onboarding/runs", tok, []byte(`{"input":{"email":"w@example.com","delayMs":1,"verifyTimeoutMs":600000}}`))
	waiting := "/v1/workflows/onboarding/runs/" + w.json(t)["id"].(string)
	if got := call(t, srv, "GET", waiting+"?wait=1", tok, nil); got.status != 200 || got.json(t)["status"] == "completed" {
		t.Fatalf("a long poll that runs out: %d %s", got.status, got.body)
	}
	for _, bad := range []string{"-1", "61", "x", "1.5", ""} {
		if got := call(t, srv, "GET", path+"?wait="+bad, tok, nil); got.status != 400 || !strings.Contains(string(got.body), "wait") {
			t.Errorf("wait=%q: %d %s, want 400 naming wait", bad, got.status, got.body)
		}
	}
}
