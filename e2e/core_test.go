package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/internal/testenv"
)

// The engine's core behaviours, through the real binary and its REST API, on each store:
// signals (sent before the wait exists, and broadcast), cancelling a spinning step, and
// hostile guests that must fail their own run and nothing else.

// settle bounds how long a run may take to reach a state; a failure deadline, never a timing
// assertion.
const settle = 60 * time.Second

func (d *daemon) deployFixture(name string) {
	d.t.Helper()
	wasm, err := os.ReadFile("../testdata/" + name)
	if err != nil {
		d.t.Fatal(err)
	}
	d.mustDo("POST", "/v1/modules", wasm, 201)
}

func (d *daemon) startRun(workflow string, input any) wire.Run {
	d.t.Helper()
	var r wire.Run
	if err := json.Unmarshal(d.mustDo("POST", "/v1/workflows/"+workflow+"/runs", map[string]any{"input": input}, 201), &r); err != nil {
		d.t.Fatal(err)
	}
	return r
}

func (d *daemon) getRun(workflow, id string) wire.Run {
	d.t.Helper()
	var r wire.Run
	if err := json.Unmarshal(d.mustDo("GET", "/v1/workflows/"+workflow+"/runs/"+id, nil, 200), &r); err != nil {
		d.t.Fatal(err)
	}
	return r
}

func (d *daemon) steps(workflow, id string) []wire.Step {
	d.t.Helper()
	var out wire.StepPage
	if err := json.Unmarshal(d.mustDo("GET", "/v1/workflows/"+workflow+"/runs/"+id+"/steps", nil, 200), &out); err != nil {
		d.t.Fatal(err)
	}
	return out.Steps
}

// awaitRun waits until the run reaches one of statuses (any end when none are given).
func (d *daemon) awaitRun(workflow, id string, statuses ...wire.RunStatus) wire.Run {
	d.t.Helper()
	var r wire.Run
	d.await(func() error {
		r = d.getRun(workflow, id)
		if len(statuses) == 0 && r.Status.Ended() || slices.Contains(statuses, r.Status) {
			return nil
		}
		if len(statuses) == 0 {
			return fmt.Errorf("run %s of %s is %s, want it ended", id, workflow, r.Status)
		}
		return fmt.Errorf("run %s of %s is %s, want one of %v", id, workflow, r.Status, statuses)
	})
	return r
}

// awaitStep waits until the run's step key has status.
func (d *daemon) awaitStep(workflow, id, key, status string) wire.Step {
	d.t.Helper()
	var step wire.Step
	d.await(func() error {
		for _, s := range d.steps(workflow, id) {
			if s.Key == key && s.Status == status {
				step = s
				return nil
			}
		}
		return fmt.Errorf("run %s: step %s is not %s", id, key, status)
	})
	return step
}

// await waits up to settle for cond, and fails the test with the daemon's log tail if it
// never holds.
func (d *daemon) await(cond func() error) {
	d.t.Helper()
	if err := testenv.Poll(d.t, settle, cond); err != nil {
		d.t.Fatalf("%v\n%s", err, d.logTail(3000))
	}
}

func userID(t *testing.T, s wire.Step) string {
	t.Helper()
	var u struct{ ID string }
	if err := json.Unmarshal(s.Output, &u); err != nil || u.ID == "" {
		t.Fatalf("create-user output %s has no id", s.Output)
	}
	return u.ID
}

func TestSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	eachStore(t, func(t *testing.T, b backend) {
		d := newDaemon(t, "signals", b, "--deploy", "../testdata/examples.wasm")
		d.start()

		// A signal sent before the run reaches its wait is kept and resolves the wait later;
		// one that does not match the wait's match resolves nothing.
		early := d.startRun("onboarding", map[string]any{"email": "ada@example.com", "delayMs": 1500, "verifyTimeoutMs": 60000})
		user := userID(t, d.awaitStep("onboarding", early.ID, "create-user", "completed"))
		var state wire.SignalResult
		_ = json.Unmarshal(d.mustDo("POST", "/v1/workflows/onboarding/runs/"+early.ID+"/signals/verify",
			map[string]any{"userId": "someone-else"}, 202), &state)
		if state.State != "buffered" {
			t.Fatalf("a non-matching signal was %s", state.State)
		}
		_ = json.Unmarshal(d.mustDo("POST", "/v1/workflows/onboarding/runs/"+early.ID+"/signals/verify",
			map[string]any{"userId": user, "via": "email"}, 202), &state)
		if state.State != "buffered" {
			t.Fatalf("a signal sent before the wait was %s, want buffered", state.State)
		}
		if r := d.awaitRun("onboarding", early.ID); r.Status != "completed" || !strings.Contains(string(r.Output), "verified") {
			t.Fatalf("onboarding with an early signal: %s %s %+v", r.Status, r.Output, r.Error)
		}

		// A broadcast resolves a run already waiting on a match it satisfies.
		waiting := d.startRun("onboarding", map[string]any{"email": "eve@example.com", "delayMs": 1, "verifyTimeoutMs": 600000})
		user = userID(t, d.awaitStep("onboarding", waiting.ID, "create-user", "completed"))
		d.awaitStep("onboarding", waiting.ID, "await-verify", "waiting")
		var res wire.BroadcastResult
		_ = json.Unmarshal(d.mustDo("POST", "/v1/events/verify", map[string]any{"userId": user}, 202), &res)
		if res.Resolved != 1 {
			t.Fatalf("broadcast resolved %d runs, want 1", res.Resolved)
		}
		if r := d.awaitRun("onboarding", waiting.ID); r.Status != "completed" {
			t.Fatalf("onboarding resolved by a broadcast: %s %+v", r.Status, r.Error)
		}
	})
}

func TestCancelStopsASpinningStep(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	eachStore(t, func(t *testing.T, b backend) {
		// One slot: while the spinning step holds it nothing else runs, so the echo run
		// completing proves the spin was stopped.
		d := newDaemon(t, "cancel", b, "--concurrency", "1")
		d.start()
		d.deployFixture("hostile.wasm")
		spin := d.startRun("spin-step", nil)
		d.awaitRun("spin-step", spin.ID, "running")
		time.Sleep(200 * time.Millisecond) // let the guest get into its loop
		d.mustDo("DELETE", "/v1/workflows/spin-step/runs/"+spin.ID, nil, 200)
		echo := d.startRun("echo", map[string]any{"hello": "world"})
		if r := d.awaitRun("echo", echo.ID); r.Status != "completed" || !strings.Contains(string(r.Output), "world") {
			t.Fatalf("echo after cancel: %s %s %+v", r.Status, r.Output, r.Error)
		}
		if r := d.awaitRun("spin-step", spin.ID); r.Status != "cancelled" {
			t.Fatalf("spin-step is %s, want cancelled", r.Status)
		}
		d.mustDo("DELETE", "/v1/workflows/spin-step/runs/"+spin.ID, nil, 409)
	})
}

func TestHostileGuestsFailTheirRunOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	eachStore(t, func(t *testing.T, b backend) {
		d := newDaemon(t, "hostile", b, "--activation-timeout", "10s", "--memory-pages", "256")
		d.start()
		d.deployFixture("hostile.wasm")
		cases := testenv.HostileRuns
		ids := make([]string, len(cases))
		for i, c := range cases {
			ids[i] = d.startRun(c.Workflow, nil).ID
		}
		// While the hostile runs fail, ordinary runs keep completing.
		for range 3 {
			echo := d.startRun("echo", map[string]any{"n": 1})
			if r := d.awaitRun("echo", echo.ID); r.Status != "completed" {
				t.Fatalf("echo: %s %+v", r.Status, r.Error)
			}
		}
		for i, c := range cases {
			r := d.awaitRun(c.Workflow, ids[i])
			if r.Status != "failed" || r.Error == nil || r.Error.Code != c.Code || !strings.Contains(r.Error.Message, c.Contains) {
				t.Errorf("%s: status %s error %+v, want failed with %s containing %q", c.Workflow, r.Status, r.Error, c.Code, c.Contains)
			}
		}
		if code, _, err := d.do("GET", "/healthz", nil); err != nil || code != 200 {
			t.Fatalf("the daemon is unhealthy after hostile guests: %d %v", code, err)
		}
	})
}

// TestEmbeddedStoreRefusesASecondDaemon: two daemons on one data directory would each
// believe they own every lease, so the second must exit at once with an error that says why.
func TestEmbeddedStoreRefusesASecondDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	b := newEmbeddedBackend(t)
	first := newDaemon(t, "first", b)
	first.start()
	second := newDaemon(t, "second", b)
	cmd := exec.Command(daemonBinary(t), second.args...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("a second daemon on the same data directory started:\n%s", out)
	}
	if !strings.Contains(string(out), "held by another wfhost daemon") {
		t.Fatalf("the second daemon's error does not say the directory is taken:\n%s", out)
	}
	t.Logf("second daemon refused: %s", strings.TrimSpace(string(out)))
	// The first is unaffected.
	if code, _, err := first.do("GET", "/readyz", nil); err != nil || code != 200 {
		t.Fatalf("first daemon after the refused start: %d %v", code, err)
	}
}
