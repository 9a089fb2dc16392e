package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/internal/testenv"
)

// TestChildLinks: GET run shows a child's parent (run, step key, policy, workflow); the runs
// listing and its counts filtered by ?parent= give a run's children with their links; a
// parent filter that is empty, not UTF-8 or too long is refused, one naming no run lists none.
func TestChildLinks(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	r := call(t, srv, "POST", "/v1/workflows/parent/runs", tok, []byte(`{"input":{"n":6,"audit":true}}`))
	if r.status != 201 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	parent := r.json(t)["id"].(string)
	testenv.Await(t, 30*time.Second, func() error {
		if run := call(t, srv, "GET", "/v1/workflows/parent/runs/"+parent, tok, nil).json(t); run["status"] != "completed" {
			return fmt.Errorf("parent is %v", run["status"])
		}
		return nil
	})
	page := call(t, srv, "GET", "/v1/runs?parent="+parent, tok, nil)
	runs := page.json(t)["runs"].([]any)
	if page.status != 200 || len(runs) != 2 {
		t.Fatalf("children of the parent: %d %s", page.status, page.body)
	}
	keys := map[string]string{}
	for _, x := range runs {
		c := x.(map[string]any)
		if c["parentRunId"] != parent || c["workflow"] != "child" {
			t.Fatalf("a listed child: %v", c)
		}
		keys[c["parentKey"].(string)] = c["id"].(string)
		if c["parentKey"] == "audit" && c["parentClose"] != "abandon" || c["parentKey"] == "square" && c["parentClose"] != "cancel" {
			t.Fatalf("a listed child's policy: %v", c)
		}
	}
	kid := call(t, srv, "GET", "/v1/workflows/child/runs/"+keys["square"], tok, nil).json(t)
	if kid["parentRunId"] != parent || kid["parentKey"] != "square" || kid["parentClose"] != "cancel" || kid["parentWorkflow"] != "parent" ||
		kid["idempotencyKey"] != parent+":square" {
		t.Fatalf("GET the square child: %v", kid)
	}
	if trig, _ := kid["triggeredBy"].(map[string]any); trig["kind"] != "parent" || trig["runId"] != parent || trig["key"] != "square" {
		t.Fatalf("the square child's triggeredBy: %v", kid["triggeredBy"])
	}
	if p := call(t, srv, "GET", "/v1/workflows/parent/runs/"+parent, tok, nil).json(t); p["parentRunId"] != nil {
		t.Fatalf("the parent shows a parent: %v", p)
	}
	counts := call(t, srv, "GET", "/v1/workflows/child/runs/counts?parent="+parent, tok, nil).json(t)
	if counts["total"] != float64(2) {
		t.Fatalf("counts of the parent's children: %v", counts)
	}
	if r := call(t, srv, "GET", "/v1/runs?parent=00000000-0000-0000-0000-000000000000", tok, nil); r.status != 200 || len(r.json(t)["runs"].([]any)) != 0 {
		t.Fatalf("children of no run: %d %s", r.status, r.body)
	}
	if r := call(t, srv, "GET", "/v1/runs?parent=not-a-run", tok, nil); r.status != 200 || len(r.json(t)["runs"].([]any)) != 0 {
		t.Fatalf("children of a malformed id: %d %s", r.status, r.body)
	}
	for _, q := range []string{"parent=", "parent=%ff", "parent=" + strings.Repeat("a", 201)} {
		for _, path := range []string{"/v1/runs?", "/v1/runs/counts?"} {
			if r := call(t, srv, "GET", path+q, tok, nil); r.status != 400 || !strings.Contains(string(r.body), "parent") {
				t.Errorf("GET %s%.40s: %d %s, want 400 naming parent", path, q, r.status, r.body)
			}
		}
	}
}
