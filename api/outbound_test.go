package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

func (c tenantClient) outbound(workflow, runID string) []wire.OutboundRecord {
	c.t.Helper()
	r := c.call("GET", "/v1/workflows/"+workflow+"/runs/"+runID+"/outbound", nil)
	if r.status != 200 {
		c.t.Fatalf("GET outbound of %s: %d %s", runID, r.status, r.body)
	}
	var out wire.OutboundPage
	if err := json.Unmarshal(r.body, &out); err != nil {
		c.t.Fatalf("outbound: %v: %s", err, r.body)
	}
	return out.Outbound
}

// runOver starts a run of workflow with input and waits for its end.
func (c tenantClient) runOver(workflow, input string) (id string, run map[string]any) {
	c.t.Helper()
	started := c.mustCall("POST", "/v1/workflows/"+workflow+"/runs", []byte(`{"input":`+input+`}`), 201)
	id = started["id"].(string)
	return id, awaitRunOver(c.t, c, "/v1/workflows/"+workflow+"/runs/"+id)
}

// TestOutboundAuditListsEveryAttempt: the API lists a run's audit trail by run, so that it
// shows a request refused outside any step, each hop of a redirected request under one
// request id, and a request whose step never reached the journal (the guest trapped after it,
// natively, or Extism's own HTTP trapped on a refusal); a guest's CRLF never reaches a row.
func TestOutboundAuditListsEveryAttempt(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") })
	mux.HandleFunc("/twice", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/once", http.StatusFound) })
	mux.HandleFunc("/once", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/hello", http.StatusFound) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	entry := strings.TrimPrefix(srv.URL, "http://")

	e := setupEnv(t, store.Limits{})
	limits := fmt.Sprintf(`{"allowedHosts":[%q]}`, "http://"+entry)
	a := newTenant(t, e, "audited", limits)
	a.mustCall("POST", "/v1/modules", testenv.Fixture(t, "capabilities.wasm"), 201)

	// Outside a step: refused, and recorded without a step.
	id, run := a.runOver("http-fetch", fmt.Sprintf(`{"url":%q,"outside":true}`, srv.URL+"/hello"))
	if run["status"] != "failed" {
		t.Fatalf("outside a step: %v", run)
	}
	rows := a.outbound("http-fetch", id)
	if len(rows) != 1 || rows[0].Step != "" || rows[0].Error != "outside_step" || rows[0].Host != "127.0.0.1" || rows[0].Path != "/hello" {
		t.Fatalf("a request outside a step: %+v", rows)
	}

	// Redirected twice: three rows, one request.
	id, run = a.runOver("http-fetch", fmt.Sprintf(`{"url":%q}`, srv.URL+"/twice?secret=1"))
	if run["status"] != "completed" {
		t.Fatalf("redirected: %v", run)
	}
	rows = a.outbound("http-fetch", id)
	if len(rows) != 3 {
		t.Fatalf("a request redirected twice: %+v", rows)
	}
	for i, want := range []struct {
		path   string
		status int
	}{{"/twice", 302}, {"/once", 302}, {"/hello", 200}} {
		if r := rows[i]; r.Hop != i || r.RequestID == "" || r.RequestID != rows[0].RequestID || r.Path != want.path ||
			r.Status != want.status || r.Step != "fetch" || r.Error != "" {
			t.Errorf("hop %d: %+v, want %+v", i, r, want)
		}
	}
	// The journal's view lists them under their step too.
	steps := a.mustCall("GET", "/v1/workflows/http-fetch/runs/"+id+"/steps", nil, 200)["steps"].([]any)
	if got := steps[0].(map[string]any)["outbound"].([]any); len(got) != 3 {
		t.Fatalf("the step's outbound: %v", got)
	}

	// The guest exits right after its request: the step never reaches the journal, and
	// its request is still listed.
	id, run = a.runOver("http-fetch", fmt.Sprintf(`{"url":%q,"exitAfter":true}`, srv.URL+"/hello"))
	if run["status"] != "failed" {
		t.Fatalf("a trap after the request: %v", run)
	}
	rows = a.outbound("http-fetch", id)
	if len(rows) != 1 || rows[0].Status != 200 || rows[0].Step != "fetch" || rows[0].Path != "/hello" {
		t.Fatalf("a request whose step trapped: %+v", rows)
	}

	// CRLF in the method, from a guest that sends it as given.
	id, _ = a.runOver("http-fetch", fmt.Sprintf(`{"url":%q,"raw":true,"method":"GET\r\nX-Injected: 1"}`, srv.URL+"/hello"))
	rows = a.outbound("http-fetch", id)
	if len(rows) != 1 || rows[0].Error != "http_denied" || strings.IndexFunc(rows[0].Method, unicode.IsControl) >= 0 || len(rows[0].Method) > 20 {
		t.Fatalf("a method with CRLF: %+v", rows)
	}

	// Extism's own HTTP traps on a refusal: the step never journals, the row is listed.
	x := newTenant(t, e, "extism-audited", limits)
	x.mustCall("POST", "/v1/modules", testenv.Fixture(t, "extism_go.wasm"), 201)
	id, run = x.runOver("extism-http", fmt.Sprintf(`{"url":%q}`, "http://127.0.0.1:1/never"))
	if run["status"] != "failed" {
		t.Fatalf("a refused Extism request: %v", run)
	}
	rows = x.outbound("extism-http", id)
	if len(rows) != 1 || rows[0].Error != "http_denied" || rows[0].Step != "fetch" || rows[0].Port != 1 {
		t.Fatalf("a refused Extism request's rows: %+v", rows)
	}

	// Another tenant sees none of it.
	if r := x.call("GET", "/v1/workflows/http-fetch/runs/"+id+"/outbound", nil); r.status != 404 {
		t.Fatalf("another tenant's run: %d %s", r.status, r.body)
	}
}

// TestAllowedHostsAreValidated: a tenant's allowlist is checked when it is set, and a
// malformed entry is a 400 that names it; a valid list is kept as written.
func TestAllowedHostsAreValidated(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{})
	newTenant(t, e, "valid-hosts", "")
	for _, bad := range []string{
		"api.example.com.", "API.example.com", "*", "api.example.com/path", "ftp://api.example.com", "127.1",
		"[::1%25lo]", "api.example.com:0", "user@api.example.com", "*.0.0.1",
	} {
		body, _ := json.Marshal(map[string]any{"limits": map[string]any{"allowedHosts": []string{"ok.example", bad}}})
		r := call(t, e.srv, "PATCH", "/v1/tenants/valid-hosts", adminToken, body)
		if r.status != 400 || r.errorCode(t) != "invalid_request" || !strings.Contains(string(r.body), bad) {
			t.Errorf("allowedHosts %q: %d %s, want a 400 naming it", bad, r.status, r.body)
		}
		body, _ = json.Marshal(map[string]any{"id": "bad-hosts", "limits": map[string]any{"allowedHosts": []string{bad}}})
		if r := call(t, e.srv, "POST", "/v1/tenants", adminToken, body); r.status != 400 {
			t.Errorf("a new tenant with allowedHosts %q: %d %s", bad, r.status, r.body)
		}
	}
	good := []string{"api.example.com", "*.example.com", "https://pay.example.com:8443", "192.0.2.7", "[2001:db8::7]:9000"}
	body, _ := json.Marshal(map[string]any{"limits": map[string]any{"allowedHosts": good}})
	r := call(t, e.srv, "PATCH", "/v1/tenants/valid-hosts", adminToken, body)
	if r.status != 200 || !strings.Contains(string(r.body), `"https://pay.example.com:8443"`) {
		t.Fatalf("a valid allowlist: %d %s", r.status, r.body)
	}
}
