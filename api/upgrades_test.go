package api_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestUpgradeGateOverHTTP: a deploy through the gate on both stores: strict refuses a renamed
// step with the report's id, upgrade moves a run to a module with a step appended, the report
// is served, and malformed policies and report ids get clear errors.
func TestUpgradeGateOverHTTP(t *testing.T) {
	t.Parallel()
	for _, kind := range bothStores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			e := setupEnvOn(t, kind, store.Limits{})
			const tok = "upgrade-tenant-token"
			if err := e.eng.EnsureToken(context.Background(), store.DefaultTenant, tok, "test"); err != nil {
				t.Fatal(err)
			}
			srv := e.srv
			if r := call(t, srv, "POST", "/v1/modules", tok, testenv.Fixture(t, "examples.wasm")); r.status != 201 {
				t.Fatalf("deploy: %d %s", r.status, r.body)
			}
			r := call(t, srv, "POST", "/v1/workflows/onboarding/runs", tok, []byte(`{"input":{"email":"a@b.c","delayMs":1,"verifyTimeoutMs":600000}}`))
			runPath := "/v1/workflows/onboarding/runs/" + r.json(t)["id"].(string)
			testenv.Await(t, 30*time.Second, func() error {
				if steps := call(t, srv, "GET", runPath+"/steps", tok, nil).json(t)["steps"].([]any); len(steps) != 4 {
					return fmt.Errorf("the run has not reached its wait: %d steps", len(steps))
				}
				return nil
			})

			for _, q := range []string{"upgrade=bogus", "upgrade=%ff", "upgrade=check&upgrade=check", "upgrade=" + strings.Repeat("x", 20000), "upgrade=Check"} {
				r := call(t, srv, "POST", "/v1/modules?replace=true&"+q, tok, testenv.Fixture(t, "examples_appended.wasm"))
				if r.status != 400 || r.errorCode(t) != "invalid_request" || len(r.body) > 1000 {
					t.Fatalf("?%.40s: %d %.300s", q, r.status, r.body)
				}
			}

			r = call(t, srv, "POST", "/v1/modules?replace=true&upgrade=strict", tok, testenv.Fixture(t, "examples_renamed.wasm"))
			if r.status != 409 || r.errorCode(t) != "upgrade_refused" || !strings.Contains(string(r.body), "1 of 1 open runs did not pass") {
				t.Fatalf("strict deploy of a renamed step: %d %s", r.status, r.body)
			}

			r = call(t, srv, "POST", "/v1/modules?replace=true&upgrade=upgrade", tok, testenv.Fixture(t, "examples_appended.wasm"))
			if r.status != 201 {
				t.Fatalf("upgrade: %d %s", r.status, r.body)
			}
			up := r.json(t)["upgrade"].(map[string]any)
			if up["moved"] != float64(1) || up["checked"] != float64(1) || up["deployed"] != true {
				t.Fatalf("upgrade summary: %s", r.body)
			}
			rep := call(t, srv, "GET", "/v1/upgrades/"+up["id"].(string), tok, nil)
			if rep.status != 200 {
				t.Fatalf("report: %d %s", rep.status, rep.body)
			}
			run := rep.json(t)["runs"].([]any)[0].(map[string]any)
			if run["verdict"] != "compatible" || run["moved"] != true || run["stopped"].(map[string]any)["seq"] != float64(3) {
				t.Fatalf("report: %s", rep.body)
			}

			for _, id := range []string{"00000000-0000-4000-8000-000000000000", "not-a-uuid", "%ff", url.PathEscape("'; DROP TABLE upgrades; --"), strings.Repeat("a", 5000)} {
				if r := call(t, srv, "GET", "/v1/upgrades/"+id, tok, nil); r.status != 404 || r.errorCode(t) != "not_found" {
					t.Fatalf("report %.40s: %d %.300s", id, r.status, r.body)
				}
			}
		})
	}
}
