package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/postgres"
)

// adminToken is the admin token of every test server.
const adminToken = "test-admin-token"

// env is a served API over a started engine on a schema of the test's own.
type env struct {
	srv     *httptest.Server
	eng     *engine.Engine
	st      *postgres.Store
	handler *api.Handler
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
	ctx := context.Background()
	rt := testenv.Runtime(t)
	schema := testenv.Schema(t, "wfhost_api")
	st, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: schema, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
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
	// 16 MiB: the capabilities fixture links net/http and is about 11 MB.
	handler := api.New(api.Config{Engine: eng, AdminToken: adminToken, MaxBodyBytes: 64 << 10, MaxModuleBytes: 16 << 20,
		Ready: func(ctx context.Context) error { return st.Ping(ctx) }})
	srv := httptest.NewServer(handler)
	t.Cleanup(func() {
		srv.Close()
		eng.Stop()
		st.Close()
	})
	return &env{srv: srv, eng: eng, st: st, handler: handler}
}

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
	req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, out}
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
	deadline := time.Now().Add(30 * time.Second)
	for userID == "" {
		steps := call(t, srv, "GET", runPath+"/steps", tok, nil).json(t)["steps"].([]any)
		if len(steps) == 4 {
			userID = steps[0].(map[string]any)["output"].(map[string]any)["id"].(string)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never reached its wait: %s", call(t, srv, "GET", runPath, tok, nil).body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := call(t, srv, "GET", "/v1/workflows/poll/runs/"+id, tok, nil); r.status != 404 || r.errorCode(t) != "not_found" {
		t.Fatalf("a run under another workflow's path: %d %s", r.status, r.body)
	}
	sig := call(t, srv, "POST", runPath+"/signals/verify", tok, []byte(`{"userId":"`+userID+`","via":"http"}`))
	if sig.status != 202 || sig.json(t)["state"] != "delivered" {
		t.Fatalf("signal: %d %s", sig.status, sig.body)
	}
	for {
		run := call(t, srv, "GET", runPath, tok, nil).json(t)
		if run["status"] == "completed" {
			if !strings.Contains(string(mustJSON(run["output"])), "verified via http") {
				t.Fatalf("output %v", run["output"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run is %v", run["status"])
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := call(t, srv, "DELETE", runPath, tok, nil); r.status != 409 || r.errorCode(t) != "conflict" {
		t.Fatalf("cancel a completed run: %d %s", r.status, r.body)
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
	big := bytes.Repeat([]byte("a"), 100<<10)
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

// FuzzAPI throws arbitrary methods, paths and bodies at the API: every answer is a JSON error or
// success, never a 5xx.
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
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.body)
	}
	srv, tok := setup(f)
	f.Fuzz(func(t *testing.T, method, path, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n#?") && !strings.Contains(path, "?") {
			return
		}
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			return
		}
		// Alternate tenant and admin tokens, so both halves of the API are fuzzed.
		if len(body)%2 == 0 {
			req.Header.Set("Authorization", "Bearer "+tok)
		} else {
			req.Header.Set("Authorization", "Bearer "+adminToken)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s with %q: %d %s", method, path, body, resp.StatusCode, out)
		}
	})
}
