package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestQueryOverHTTP: POST .../query/{query} answers from a live run's state with the
// workflow's handler and changes nothing; hostile names, arguments and runs each get their
// own clear error; an ended run is a 409.
func TestQueryOverHTTP(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	r := call(t, srv, "POST", "/v1/workflows/onboarding/runs", tok, []byte(`{"input":{"email":"Ada@Example.com","delayMs":10,"verifyTimeoutMs":600000}}`))
	if r.status != 201 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	runPath := "/v1/workflows/onboarding/runs/" + r.json(t)["id"].(string)
	var userID string
	testenv.Await(t, 30*time.Second, func() error {
		steps := call(t, srv, "GET", runPath+"/steps", tok, nil).json(t)["steps"].([]any)
		if len(steps) < 4 || steps[3].(map[string]any)["status"] != "waiting" {
			return fmt.Errorf("the run has not reached its wait: %v", steps)
		}
		userID = steps[0].(map[string]any)["output"].(map[string]any)["id"].(string)
		return nil
	})
	journal := call(t, srv, "GET", runPath+"/steps", tok, nil).body

	r = call(t, srv, "POST", runPath+"/query/status", tok, []byte(`{"who":"ops"}`))
	if r.status != 200 {
		t.Fatalf("query: %d %s", r.status, r.body)
	}
	ans := r.json(t)
	res, at := ans["result"].(map[string]any), ans["at"].(map[string]any)
	if res["stage"] != "awaiting-verify" || res["userId"] != userID || res["arg"].(map[string]any)["who"] != "ops" ||
		at["seq"] != float64(3) || at["new"] != false || at["at"].(map[string]any)["key"] != "await-verify" {
		t.Fatalf("query: %s", r.body)
	}
	if r := call(t, srv, "POST", runPath+"/query/status", tok, nil); r.status != 200 || r.json(t)["result"].(map[string]any)["arg"] != nil {
		t.Fatalf("query without an argument: %d %s, want 200 with arg null", r.status, r.body)
	}

	for _, tc := range []struct {
		name, path string
		body       []byte
		status     int
		code       string
	}{
		{"an unknown query", runPath + "/query/no-such-query", nil, 404, "unknown_query"},
		{"a non-UTF-8 name", runPath + "/query/st%ffatus", nil, 400, "invalid_request"},
		{"a name with a control character", runPath + "/query/st%01atus", nil, 400, "invalid_request"},
		{"a name with an escaped slash", runPath + "/query/a%2Fb", nil, 400, "invalid_request"},
		{"a name past 200 bytes", runPath + "/query/" + strings.Repeat("q", 201), nil, 400, "invalid_request"},
		{"an argument that is not JSON", runPath + "/query/status", []byte(`{"who":`), 400, "invalid_json"},
		{"an argument with a NUL", runPath + "/query/status", []byte(`"\u0000"`), 400, "invalid_request"},
		{"an argument with a duplicate key", runPath + "/query/status", []byte(`{"a":1,"a":2}`), 400, "invalid_json"},
		{"an oversized argument", runPath + "/query/status", []byte(`"` + strings.Repeat("x", 3<<20) + `"`), 413, "too_large"},
		{"an unknown run", "/v1/workflows/onboarding/runs/00000000-0000-4000-8000-000000000000/query/status", nil, 404, "not_found"},
		{"a malformed run id", "/v1/workflows/onboarding/runs/%ff%fe/query/status", nil, 404, "not_found"},
		{"the run under another workflow", strings.Replace(runPath, "onboarding", "poll", 1) + "/query/status", nil, 404, "not_found"},
	} {
		if r := call(t, srv, "POST", tc.path, tok, tc.body); r.status != tc.status || r.errorCode(t) != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.status, r.body, tc.status, tc.code)
		}
	}
	if r := call(t, srv, "POST", runPath+"/query/status", "", nil); r.status != 401 {
		t.Errorf("no token: %d %s, want 401", r.status, r.body)
	}
	if got := call(t, srv, "GET", runPath+"/steps", tok, nil).body; string(got) != string(journal) {
		t.Fatalf("the queries changed the journal:\n%s\nwas\n%s", got, journal)
	}

	if r := call(t, srv, "POST", runPath+"/signals/verify", tok, []byte(fmt.Sprintf(`{"userId":%q,"via":"email"}`, userID))); r.status != 202 {
		t.Fatalf("signal: %d %s", r.status, r.body)
	}
	testenv.Await(t, 30*time.Second, func() error {
		if run := call(t, srv, "GET", runPath, tok, nil).json(t); run["status"] != "completed" {
			return fmt.Errorf("run is %v", run["status"])
		}
		return nil
	})
	if r := call(t, srv, "POST", runPath+"/query/status", tok, nil); r.status != 409 || r.errorCode(t) != "run_ended" {
		t.Errorf("a query of the ended run: %d %s, want 409 run_ended", r.status, r.body)
	}
}

// TestQueryResultIsHeldToTheOutputLimit: a query's result is bounded as a run's output is: one
// over the tenant's maxOutputBytes is a 422 query_failed naming payload_too_large, and the run
// is untouched.
func TestQueryResultIsHeldToTheOutputLimit(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{MaxOutputBytes: 1024})
	const token = "default-tenant-token"
	ctx := context.Background()
	if err := e.eng.EnsureToken(ctx, store.DefaultTenant, token, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.eng.Deploy(ctx, store.DefaultTenant, testenv.Fixture(t, "examples.wasm"), false); err != nil {
		t.Fatal(err)
	}
	r := call(t, e.srv, "POST", "/v1/workflows/onboarding/runs", token, []byte(`{"input":{"email":"Bo@Example.com","delayMs":10,"verifyTimeoutMs":600000}}`))
	if r.status != 201 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	runPath := "/v1/workflows/onboarding/runs/" + r.json(t)["id"].(string)
	if r := call(t, e.srv, "POST", runPath+"/query/status", token, []byte(`"small"`)); r.status != 200 {
		t.Fatalf("a small result: %d %s", r.status, r.body)
	}
	// The argument is echoed: 2,000 bytes of it make a result over 1,024.
	r = call(t, e.srv, "POST", runPath+"/query/status", token, []byte(`"`+strings.Repeat("x", 2000)+`"`))
	if r.status != 422 || r.errorCode(t) != "query_failed" || !strings.Contains(string(r.body), "payload_too_large") {
		t.Fatalf("a result over the output limit: %d %s, want 422 query_failed with payload_too_large", r.status, r.body)
	}
}
