package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/internal/testenv"
)

// TestPauseAndResumeARun: POST .../pause pauses a sleeping run at once (200), a list by status
// shows it, POST .../resume lets it finish; hostile requests are refused with clear errors.
func TestPauseAndResumeARun(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	r := call(t, srv, "POST", "/v1/workflows/steps/runs", tok, []byte(`{"input":{"n":2,"sleepMs":600000}}`))
	if r.status != 201 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	id := r.json(t)["id"].(string)
	runPath := "/v1/workflows/steps/runs/" + id
	testenv.Await(t, 30*time.Second, func() error {
		if steps := call(t, srv, "GET", runPath+"/steps", tok, nil); len(steps.json(t)["steps"].([]any)) < 2 {
			return fmt.Errorf("run %s has not reached its sleep", id)
		}
		return nil
	})
	r = call(t, srv, "POST", runPath+"/pause", tok, nil)
	if run := r.json(t); r.status != 200 || run["status"] != "paused" || run["pausedAt"] == nil {
		t.Fatalf("pause: %d %s, want 200 with the run paused", r.status, r.body)
	}
	if r := call(t, srv, "POST", runPath+"/pause", tok, nil); r.status != 200 || r.json(t)["status"] != "paused" {
		t.Fatalf("pause again: %d %s, want 200 as it is", r.status, r.body)
	}
	list := call(t, srv, "GET", "/v1/workflows/steps/runs?status=paused", tok, nil)
	if runs := list.json(t)["runs"].([]any); list.status != 200 || len(runs) != 1 {
		t.Fatalf("paused runs: %d %s", list.status, list.body)
	}
	for _, c := range []struct {
		path, body string
		status     int
		code       string
	}{
		{runPath + "/resume", `{"version":1}`, 400, "invalid_json"},
		{runPath + "/resume", `{"versoin":"1"}`, 400, "invalid_json"},
		{runPath + "/resume", `{"version":"\u0000"}`, 400, "invalid_request"},
		{runPath + "/resume", `{"version":"` + strings.Repeat("v", 201) + `"}`, 400, "invalid_request"},
		{runPath + "/resume", `{"version":"9"}`, 404, "not_found"},
		{runPath + "/resume", "\xff", 400, "invalid_json"},
		{runPath + "/resume?version=1", `{}`, 400, "invalid_request"},
		{runPath + "/pause?x=1", "", 400, "invalid_request"},
		{"/v1/workflows/other/runs/" + id + "/pause", "", 404, "not_found"},
		{"/v1/workflows/steps/runs/not-a-run/pause", "", 404, "not_found"},
		{"/v1/workflows/steps/runs/00000000-0000-4000-8000-000000000000/resume", "", 404, "not_found"},
	} {
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		r := call(t, srv, "POST", c.path, tok, body)
		if r.status != c.status || !strings.Contains(string(r.body), `"`+c.code+`"`) {
			t.Errorf("POST %s %q: %d %s, want %d %s", c.path, c.body, r.status, r.body, c.status, c.code)
		}
	}
	r = call(t, srv, "POST", runPath+"/resume", tok, []byte(`{}`))
	if run := r.json(t); r.status != 200 || run["status"] != "running" || run["pausedAt"] != nil {
		t.Fatalf("resume: %d %s, want 200 with the run running", r.status, r.body)
	}
	if r := call(t, srv, "POST", runPath+"/terminate", tok, nil); r.status != 200 {
		t.Fatalf("terminate: %d %s", r.status, r.body)
	}
	if r := call(t, srv, "POST", runPath+"/pause", tok, nil); r.status != 409 {
		t.Errorf("pause an ended run: %d %s, want 409", r.status, r.body)
	}
	if r := call(t, srv, "POST", runPath+"/resume", tok, nil); r.status != 409 {
		t.Errorf("resume an ended run: %d %s, want 409", r.status, r.body)
	}
}

// TestPauseAndResumeAWorkflow: a paused workflow creates paused runs and lists as paused; a
// single run of it cannot be resumed alone; its resume lets them run.
func TestPauseAndResumeAWorkflow(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	r := call(t, srv, "POST", "/v1/workflows/steps/pause", tok, nil)
	if r.status != 200 || r.json(t)["paused"] != true {
		t.Fatalf("pause workflow: %d %s", r.status, r.body)
	}
	wfs := call(t, srv, "GET", "/v1/workflows", tok, nil)
	if !strings.Contains(string(wfs.body), `"paused":true`) {
		t.Fatalf("workflows do not show the pause: %s", wfs.body)
	}
	r = call(t, srv, "POST", "/v1/workflows/steps/runs", tok, []byte(`{"input":{"n":1}}`))
	if r.status != 201 || r.json(t)["status"] != "paused" {
		t.Fatalf("start under a pause: %d %s, want 201 paused", r.status, r.body)
	}
	runPath := "/v1/workflows/steps/runs/" + r.json(t)["id"].(string)
	if r := call(t, srv, "POST", runPath+"/resume", tok, nil); r.status != 409 {
		t.Fatalf("resume one run of a paused workflow: %d %s, want 409", r.status, r.body)
	}
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/v1/workflows/nope/pause", 404},
		{"/v1/workflows/steps/pause?version=9", 404},
		{"/v1/workflows/steps/pause?version=1&version=2", 400},
		{"/v1/workflows/steps/pause?version=%ff", 400},
		{"/v1/workflows/steps/pause?version=%00", 400},
		{"/v1/workflows/steps/pause?versions=1", 400},
		{"/v1/workflows/steps/resume?version=1", 404}, // version 1 is not paused on its own
		{"/v1/workflows/%ff/resume", 400},
	} {
		if r := call(t, srv, "POST", c.path, tok, nil); r.status != c.status {
			t.Errorf("POST %s: %d %s, want %d", c.path, r.status, r.body, c.status)
		}
	}
	r = call(t, srv, "POST", "/v1/workflows/steps/resume", tok, nil)
	if r.status != 200 || r.json(t)["runs"] != float64(1) {
		t.Fatalf("resume workflow: %d %s, want 1 run resumed", r.status, r.body)
	}
	testenv.Await(t, 30*time.Second, func() error {
		if run := call(t, srv, "GET", runPath, tok, nil).json(t); run["status"] != "completed" {
			return fmt.Errorf("run is %v", run["status"])
		}
		return nil
	})
	if r := call(t, srv, "POST", "/v1/workflows/steps/resume", tok, nil); r.status != 404 {
		t.Errorf("resume a workflow not paused: %d %s, want 404", r.status, r.body)
	}
}

// TestResumeRefusedOntoADivergingVersion: a resume onto a version whose code parts from the
// run's journal is 409 resume_refused with the replay's finding, and the run stays paused.
func TestResumeRefusedOntoADivergingVersion(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	r := call(t, srv, "POST", "/v1/workflows/charge-or-pause/runs", tok, []byte(`{"input":{"failAttempts":5}}`))
	if r.status != 201 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	runPath := "/v1/workflows/charge-or-pause/runs/" + r.json(t)["id"].(string)
	testenv.Await(t, 30*time.Second, func() error {
		if run := call(t, srv, "GET", runPath, tok, nil).json(t); run["status"] != "paused" {
			return fmt.Errorf("run is %v", run["status"])
		}
		return nil
	})
	// Version 2 of charge-or-pause renames its charge step.
	if d := call(t, srv, "POST", "/v1/modules?replace=true", tok, testenv.Fixture(t, "examples_appended.wasm")); d.status != 201 {
		t.Fatalf("deploy: %d %s", d.status, d.body)
	}
	r = call(t, srv, "POST", runPath+"/resume", tok, []byte(`{"version":"2"}`))
	if r.status != 409 || r.errorCode(t) != "resume_refused" {
		t.Fatalf("resume onto a diverging version: %d %s, want 409 resume_refused", r.status, r.body)
	}
	check := r.json(t)["error"].(map[string]any)["check"].(map[string]any)
	if check["verdict"] != "diverged" || check["divergence"].(map[string]any)["seq"] != float64(0) {
		t.Fatalf("the refusal's check: %v", check)
	}
	if run := call(t, srv, "GET", runPath, tok, nil).json(t); run["status"] != "paused" || run["version"] != "1" {
		t.Fatalf("after the refusal: %v on %v, want paused on 1", run["status"], run["version"])
	}
}
