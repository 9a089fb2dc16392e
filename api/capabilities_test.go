package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestOutboundHTTPAndSecretsEndToEnd: a tenant's step calls a server through the host with a
// secret as its bearer token. The server gets the secret; the run's output, journal, audit
// trail and every API answer show it redacted or not at all; a request to a host outside the
// allowlist fails the step with http_denied and is audited too.
func TestOutboundHTTPAndSecretsEndToEnd(t *testing.T) {
	t.Parallel()
	const secret = "sk_live_end_to_end_42"
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		fmt.Fprintf(w, "charged; you sent %s", r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)

	e := setupEnv(t, store.Limits{})
	a := newTenant(t, e, "payco", `{"allowedHosts":["`+strings.TrimPrefix(srv.URL, "http://")+`"]}`)
	a.mustCall("POST", "/v1/modules", testenv.Fixture(t, "capabilities.wasm"), 201)
	a.mustCall("PUT", "/v1/secrets/stripe", []byte(`{"value":"`+secret+`"}`), 200)
	var bodies []string
	record := func(r response) response { bodies = append(bodies, string(r.body)); return r }

	run := a.mustCall("POST", "/v1/workflows/http-fetch/runs", []byte(`{"input":{"url":"`+srv.URL+`/charge?amount=5","method":"POST","secret":"stripe"}}`), 201)
	done := awaitRunOver(t, a, "/v1/workflows/http-fetch/runs/"+run["id"].(string))
	if done["status"] != "completed" || !strings.Contains(fmt.Sprint(done["output"]), "Bearer [redacted]") {
		t.Fatalf("run: %v", done)
	}
	mu.Lock()
	if len(seen) != 1 || seen[0] != "Bearer "+secret {
		t.Fatalf("the server saw %q, want the secret as a bearer token", seen)
	}
	mu.Unlock()
	steps := record(a.call("GET", "/v1/workflows/http-fetch/runs/"+run["id"].(string)+"/steps", nil)).json(t)["steps"].([]any)
	out := steps[0].(map[string]any)["outbound"].([]any)
	rec := out[0].(map[string]any)
	if len(out) != 1 || rec["host"] != "127.0.0.1" || rec["path"] != "/charge" || rec["status"] != float64(200) || rec["method"] != "POST" {
		t.Fatalf("audit trail: %v", out)
	}

	denied := a.mustCall("POST", "/v1/workflows/http-fetch/runs", []byte(`{"input":{"url":"http://api.not-allowed.example/x"}}`), 201)
	end := awaitRunOver(t, a, "/v1/workflows/http-fetch/runs/"+denied["id"].(string))
	if end["status"] != "failed" || end["error"].(map[string]any)["code"] != "http_denied" {
		t.Fatalf("denied host: %v", end)
	}
	dsteps := record(a.call("GET", "/v1/workflows/http-fetch/runs/"+denied["id"].(string)+"/steps", nil)).json(t)["steps"].([]any)
	if drec := dsteps[0].(map[string]any)["outbound"].([]any)[0].(map[string]any); drec["error"] != "http_denied" || drec["host"] != "api.not-allowed.example" {
		t.Fatalf("denied request's audit: %v", drec)
	}

	list := record(a.call("GET", "/v1/secrets", nil))
	if !strings.Contains(string(list.body), `"stripe"`) {
		t.Fatalf("secret list: %s", list.body)
	}
	record(call(t, e.srv, "GET", "/v1/tenants/payco/secrets", adminToken, nil))
	record(a.call("GET", "/v1/workflows/http-fetch/runs/"+run["id"].(string), nil))
	record(a.call("GET", "/v1/runs", nil))
	for _, b := range bodies {
		if strings.Contains(b, secret) {
			t.Fatalf("an API answer holds the secret: %s", b)
		}
	}
	if r := a.call("PUT", "/v1/secrets/x", []byte(`{"value":""}`)); r.status != 400 {
		t.Fatalf("empty secret: %d %s", r.status, r.body)
	}
	if r := a.call("PUT", "/v1/secrets/x", []byte(`{}`)); r.status != 400 {
		t.Fatalf("no value: %d %s", r.status, r.body)
	}
	if r := a.call("DELETE", "/v1/secrets/nope", nil); r.status != 404 {
		t.Fatalf("delete unknown: %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		name, path string
		body       []byte
		status     int
		code       string
	}{
		{"value not a string", "/v1/secrets/x", []byte(`{"value":5}`), 400, "invalid_json"},
		{"malformed JSON", "/v1/secrets/x", []byte(`{"value":`), 400, "invalid_json"},
		{"two JSON values", "/v1/secrets/x", []byte(`{"value":"abcd"}{}`), 400, "invalid_json"},
		{"name too long", "/v1/secrets/" + strings.Repeat("n", 201), []byte(`{"value":"abcd"}`), 400, "invalid_request"},
		{"oversized value", "/v1/secrets/x", []byte(`{"value":"` + strings.Repeat("v", 70<<10) + `"}`), 413, "too_large"},
	} {
		if r := a.call("PUT", c.path, c.body); r.status != c.status || r.errorCode(t) != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, c.code)
		}
	}
	if r := a.call("GET", "/v1/secrets", nil); strings.Contains(string(r.body), `"x"`) {
		t.Fatalf("a refused secret was stored: %s", r.body)
	}
}

func awaitRunOver(t *testing.T, c tenantClient, path string) map[string]any {
	t.Helper()
	var r map[string]any
	testenv.Await(t, 30*time.Second, func() error {
		r = c.mustCall("GET", path, nil, 200)
		if status, _ := r["status"].(string); !wire.RunStatus(status).Ended() {
			return fmt.Errorf("%s has not ended: %v", path, r)
		}
		return nil
	})
	return r
}
