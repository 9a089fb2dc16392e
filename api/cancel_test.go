package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/internal/testenv"
)

// TestCancelAndTerminate: POST .../cancel asks the workflow to cancel itself (202 with the
// live run and its cancel recorded; the run then ends cancelled, having been told), POST
// .../terminate stops a run at once (200), and both refuse what they cannot take.
func TestCancelAndTerminate(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	start := func() string {
		r := call(t, srv, "POST", "/v1/workflows/steps/runs", tok, []byte(`{"input":{"n":3,"sleepMs":600000}}`))
		if r.status != 201 {
			t.Fatalf("start: %d %s", r.status, r.body)
		}
		id := r.json(t)["id"].(string)
		testenv.Await(t, 30*time.Second, func() error {
			if steps := call(t, srv, "GET", "/v1/workflows/steps/runs/"+id+"/steps", tok, nil); len(steps.json(t)["steps"].([]any)) < 2 {
				return fmt.Errorf("run %s has not reached its sleep", id)
			}
			return nil
		})
		return "/v1/workflows/steps/runs/" + id
	}
	runPath := start()
	for _, q := range []string{"?graceMs=0", "?graceMs=-1", "?graceMs=86400001", "?graceMs=1s", "?graceMs=%ff", "?grace=1000", "?graceMs=1&graceMs=2"} {
		if r := call(t, srv, "POST", runPath+"/cancel"+q, tok, nil); r.status != 400 {
			t.Errorf("cancel%s: %d %s, want 400", q, r.status, r.body)
		}
	}
	r := call(t, srv, "POST", runPath+"/cancel?graceMs=30000", tok, nil)
	if run := r.json(t); r.status != 202 || run["status"] != "running" || run["cancelRequestedAt"] == nil || run["cancelGraceUntil"] == nil {
		t.Fatalf("cancel: %d %s, want 202 with the live run and its cancel", r.status, r.body)
	}
	testenv.Await(t, 30*time.Second, func() error {
		if run := call(t, srv, "GET", runPath, tok, nil).json(t); run["status"] != "cancelled" {
			return fmt.Errorf("run is %v", run["status"])
		}
		return nil
	})
	steps := call(t, srv, "GET", runPath+"/steps", tok, nil).json(t)["steps"].([]any)
	if last := steps[len(steps)-1].(map[string]any); last["status"] != "cancelled" || last["kind"] != "sleep" {
		t.Fatalf("the journal's last entry %v, want the sleep cancelled", last)
	}
	if r := call(t, srv, "POST", runPath+"/cancel", tok, nil); r.status != 409 {
		t.Errorf("cancel of a cancelled run: %d %s, want 409", r.status, r.body)
	}

	runPath = start()
	if r := call(t, srv, "POST", runPath+"/terminate", tok, nil); r.status != 200 || r.json(t)["status"] != "cancelled" {
		t.Fatalf("terminate: %d %s, want 200 with the run cancelled", r.status, r.body)
	}
	if r := call(t, srv, "POST", runPath+"/terminate", tok, nil); r.status != 409 {
		t.Errorf("terminate twice: %d %s, want 409", r.status, r.body)
	}
	for _, p := range []string{"/v1/workflows/steps/runs/not-a-uuid", "/v1/workflows/steps/runs/%ff%fe", "/v1/workflows/poll/runs/00000000-0000-4000-8000-000000000000"} {
		for _, verb := range []string{"/cancel", "/terminate"} {
			if r := call(t, srv, "POST", p+verb, tok, nil); r.status != 404 {
				t.Errorf("POST %s%s: %d %s, want 404", p, verb, r.status, r.body)
			}
		}
	}
	if r := call(t, srv, "POST", runPath+"/cancel", "", nil); r.status != 401 {
		t.Errorf("no token: %d %s", r.status, r.body)
	}
}

// TestStartAndWait: POST .../runs?wait=N starts a run and answers with its end, in one request;
// a run that outlives the wait is answered as it stands; a bad wait starts nothing.
func TestStartAndWait(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	r := call(t, srv, "POST", "/v1/workflows/steps/runs?wait=30", tok, []byte(`{"input":{"n":3}}`))
	if run := r.json(t); r.status != 201 || run["status"] != "completed" || run["output"] == nil {
		t.Fatalf("start and wait: %d %s, want 201 with the completed run", r.status, r.body)
	}
	r = call(t, srv, "POST", "/v1/workflows/steps/runs?wait=1", tok, []byte(`{"input":{"n":2,"sleepMs":600000}}`))
	if run := r.json(t); r.status != 201 || run["status"] != "running" {
		t.Fatalf("a run that outlives the wait: %d %s, want 201 with it running", r.status, r.body)
	}
	before := len(call(t, srv, "GET", "/v1/workflows/steps/runs", tok, nil).json(t)["runs"].([]any))
	for _, q := range []string{"?wait=-1", "?wait=61", "?wait=x", "?wait=1&wait=2", "?wait=%ff"} {
		if r := call(t, srv, "POST", "/v1/workflows/steps/runs"+q, tok, []byte(`{"input":{"n":1}}`)); r.status != 400 {
			t.Errorf("start%s: %d %s, want 400", q, r.status, r.body)
		}
	}
	if after := len(call(t, srv, "GET", "/v1/workflows/steps/runs", tok, nil).json(t)["runs"].([]any)); after != before {
		t.Errorf("refused starts started runs: %d runs, then %d", before, after)
	}
}

// TestRestartRefusesWhatItCannotTake: POST .../restart refuses a malformed, oversized or
// non-UTF-8 body, a live run and a step the run never reached, and restarts an ended one.
func TestRestartRefusesWhatItCannotTake(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	r := call(t, srv, "POST", "/v1/workflows/steps/runs?wait=30", tok, []byte(`{"input":{"n":2}}`))
	if r.status != 201 || r.json(t)["status"] != "completed" {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	runPath := "/v1/workflows/steps/runs/" + r.json(t)["id"].(string)
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{`, 400}, {`[]`, 400}, {`{"fromStep":1}`, 400}, {`{"unknown":true}`, 400},
		{`{"fromStep":"no-such-step"}`, 400}, {`{"fromStep":"` + "\xff" + `"}`, 400},
		{`{"fromStep":"` + strings.Repeat("s", 5000) + `"}`, 400}, {`{"version":"9"}`, 404},
		{`{"timeoutMs":-1}`, 400}, {`{"input":"\u0000"}`, 400},
	} {
		if r := call(t, srv, "POST", runPath+"/restart", tok, []byte(c.body)); r.status != c.status {
			t.Errorf("restart with %.60q: %d %s, want %d", c.body, r.status, r.body, c.status)
		}
	}
	r = call(t, srv, "POST", runPath+"/restart", tok, []byte(`{"fromStep":"s#1","input":{"n":3}}`))
	if run := r.json(t); r.status != 201 || run["restartedFrom"] == nil {
		t.Fatalf("restart from s#1: %d %s, want 201 with the new run", r.status, r.body)
	}
	live := call(t, srv, "POST", "/v1/workflows/steps/runs", tok, []byte(`{"input":{"n":2,"sleepMs":600000}}`)).json(t)["id"].(string)
	if r := call(t, srv, "POST", "/v1/workflows/steps/runs/"+live+"/restart", tok, []byte(`{}`)); r.status != 409 {
		t.Errorf("restart of a live run: %d %s, want 409", r.status, r.body)
	}
}
