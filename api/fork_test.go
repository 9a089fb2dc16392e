package api_test

import (
	"strings"
	"testing"
)

// TestForkRefusesWhatItCannotTake: POST .../fork refuses a malformed, oversized or non-UTF-8
// body, a cut after a step that has not ended and a step the run never reached, and forks a
// live run (the source keeps sleeping) and an ended one.
func TestForkRefusesWhatItCannotTake(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	r := call(t, srv, "POST", "/v1/workflows/steps/runs", tok, []byte(`{"input":{"n":2,"sleepMs":600000}}`))
	if r.status != 202 && r.status != 201 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	live := r.json(t)["id"].(string)
	runPath := "/v1/workflows/steps/runs/" + live
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{`, 400}, {`[]`, 400}, {`{"fromStep":1}`, 400}, {`{"unknown":true}`, 400},
		{`{"fromStep":"no-such-step"}`, 400}, {`{"fromStep":"` + "\xff" + `"}`, 400},
		{`{"fromStep":"` + strings.Repeat("s", 5000) + `"}`, 400}, {`{"version":"9"}`, 404},
		{`{"timeoutMs":-1}`, 400}, {`{"input":"\u0000"}`, 400}, {strings.Repeat(" ", 2<<20) + `{}`, 413},
	} {
		if r := call(t, srv, "POST", runPath+"/fork", tok, []byte(c.body)); r.status != c.status {
			t.Errorf("fork with %.60q: %d %.300s, want %d", c.body, r.status, r.body, c.status)
		}
	}
	r = call(t, srv, "POST", runPath+"/fork", tok, []byte(`{"input":{"n":1}}`))
	if run := r.json(t); r.status != 201 || run["restartedFrom"] != live || run["status"] != "pending" {
		t.Fatalf("fork of a live run: %d %s, want 201 with the new run linked to %s", r.status, r.body, live)
	}
	if src := call(t, srv, "GET", runPath, tok, nil).json(t); src["status"] != "running" && src["status"] != "pending" {
		t.Fatalf("the source after its fork: %v", src["status"])
	}
	if r := call(t, srv, "POST", "/v1/workflows/steps/runs/00000000-0000-4000-8000-000000000000/fork", tok, []byte(`{}`)); r.status != 404 {
		t.Errorf("fork of an unknown run: %d %s, want 404", r.status, r.body)
	}
	done := call(t, srv, "POST", "/v1/workflows/steps/runs?wait=30", tok, []byte(`{"input":{"n":2}}`))
	if done.status != 201 || done.json(t)["status"] != "completed" {
		t.Fatalf("start: %d %s", done.status, done.body)
	}
	ended := done.json(t)["id"].(string)
	r = call(t, srv, "POST", "/v1/workflows/steps/runs/"+ended+"/fork", tok, []byte(`{"fromStep":"s#1"}`))
	if run := r.json(t); r.status != 201 || run["restartedFrom"] != ended {
		t.Fatalf("fork of an ended run from s#1: %d %s", r.status, r.body)
	}
}
