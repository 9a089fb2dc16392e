package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestGuestLogOverHTTP: GET .../runs/{id}/logs serves what a run's guest logged, on both
// stores: each step callback's line once, in order, with its step, over activations that
// replayed the journal (the steps sleep between them), paged by cursor; the lifecycle log does
// not list them; malformed cursors and limits, and runs that are not there, get clear errors.
func TestGuestLogOverHTTP(t *testing.T) {
	t.Parallel()
	for _, kind := range bothStores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			e := setupEnvOn(t, kind, store.Limits{})
			a := newTenant(t, e, "logger", "")
			a.mustCall("POST", "/v1/modules", testenv.Fixture(t, "examples.wasm"), 201)
			run := a.mustCall("POST", "/v1/workflows/steps/runs?wait=60", []byte(`{"input":{"n":3,"sleepMs":20}}`), 201)
			if run["status"] != "completed" {
				t.Fatalf("run: %v", run)
			}
			runPath := "/v1/workflows/steps/runs/" + run["id"].(string)
			if acts := run["activations"].(float64); acts < 3 {
				t.Fatalf("the run had %v activations; the test needs the replays of several", acts)
			}
			page := a.mustCall("GET", runPath+"/logs", nil, 200)
			lines := page["lines"].([]any)
			if len(lines) != 3 || page["nextCursor"] != nil {
				t.Fatalf("logs: %v, want the 3 steps' lines once each", page)
			}
			for i, l := range lines {
				l := l.(map[string]any)
				step := "s"
				if i > 0 {
					step = fmt.Sprintf("s#%d", i)
				}
				if l["message"] != fmt.Sprintf("step ran index=%d attempt=1", i) || l["step"] != step || l["level"] != "info" || l["at"] == nil {
					t.Fatalf("line %d: %v", i, l)
				}
			}
			first := a.mustCall("GET", runPath+"/logs?limit=1", nil, 200)
			cursor, _ := first["nextCursor"].(string)
			rest := a.mustCall("GET", runPath+"/logs?limit=5&cursor="+cursor, nil, 200)
			if len(first["lines"].([]any)) != 1 || len(rest["lines"].([]any)) != 2 || rest["nextCursor"] != nil {
				t.Fatalf("pages: %v then %v", first, rest)
			}
			if body := string(a.call("GET", runPath+"/log", nil).body); strings.Contains(body, "step ran") || strings.Contains(body, `"guest"`) {
				t.Fatalf("the lifecycle log lists the guest's lines: %s", body)
			}

			for _, c := range []struct {
				path   string
				status int
				code   string
			}{
				{runPath + "/logs?limit=0", 400, "invalid_request"},
				{runPath + "/logs?limit=1001", 400, "invalid_request"},
				{runPath + "/logs?limit=%ff", 400, "invalid_request"},
				{runPath + "/logs?cursor=-1", 400, "invalid_request"},
				{runPath + "/logs?cursor=" + strings.Repeat("9", 40), 400, "invalid_request"},
				{runPath + "/logs?cursor=%ff%fe", 400, "invalid_request"},
				{runPath + "/logs?cursor=1&cursor=2", 400, "invalid_request"},
				{runPath + "/logs?follow=true", 400, "invalid_request"},
				{"/v1/workflows/steps/runs/00000000-0000-4000-8000-000000000000/logs", 404, "not_found"},
				{"/v1/workflows/onboarding/runs/" + run["id"].(string) + "/logs", 404, "not_found"},
				{"/v1/workflows/steps/runs/%27%3B%20DROP%20TABLE%20run_log%3B--/logs", 404, "not_found"},
			} {
				if r := a.call("GET", c.path, nil); r.status != c.status || r.errorCode(t) != c.code || len(r.body) > 2000 {
					t.Errorf("%.80s: %d %.300s, want %d %s", c.path, r.status, r.body, c.status, c.code)
				}
			}
		})
	}
}
