package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// dryReplay replays the journal on the fixture module named, offline: no store is involved.
func dryReplay(t *testing.T, module string, r engine.Replay) *engine.ReplayReport {
	t.Helper()
	rt := runtimeForTests(t)
	mod, err := rt.Load(context.Background(), fixture(t, module))
	if err != nil {
		t.Fatalf("load %s: %v", module, err)
	}
	rep, err := engine.DryReplay(context.Background(), rt, mod, r)
	if err != nil {
		t.Fatalf("dry replay on %s: %v", module, err)
	}
	return rep
}

// finishedRun runs a workflow to its end on a live engine and returns it as a dry replay
// takes it, with its journal.
func finishedRun(t *testing.T, h *harness, workflow string, input any) (store.Run, engine.Replay) {
	t.Helper()
	run := h.start(workflow, input)
	done := h.await(run.ID, settle)
	if done.Status != store.StatusCompleted {
		t.Fatalf("run %s: status %s, error %+v", workflow, done.Status, done.Error)
	}
	return done, engine.Replay{Workflow: workflow, Input: done.Input, RunID: done.ID, CreatedAt: done.CreatedAt, Journal: h.steps(done.ID)}
}

func TestDryReplay(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	onboarding, onboardingReplay := finishedRun(t, h, "onboarding", map[string]any{"email": "ada@example.com", "delayMs": 1, "verifyTimeoutMs": 1})
	_, stepsReplay := finishedRun(t, h, "steps", map[string]any{"n": 3})
	if n := len(onboardingReplay.Journal); n != 5 {
		t.Fatalf("onboarding journal has %d entries, want 5: %s", n, journalText(onboardingReplay.Journal))
	}

	t.Run("the same module, and the same workflows in Rust and AssemblyScript, are compatible", func(t *testing.T) {
		for _, module := range []string{"examples.wasm", "examples_rust.wasm", "examples_as.wasm"} {
			rep := dryReplay(t, module, onboardingReplay)
			if rep.Verdict != engine.ReplayCompatible || !rep.Ended || rep.Replayed != 5 || rep.Error != nil {
				t.Fatalf("%s: %+v, want compatible and ended after 5 entries", module, rep)
			}
			if !jsonEqual(t, rep.Output, onboarding.Output) {
				t.Fatalf("%s: output %s, the run's %s", module, rep.Output, onboarding.Output)
			}
		}
	})

	t.Run("a renamed step diverges at its entry", func(t *testing.T) {
		rep := dryReplay(t, "examples_renamed.wasm", onboardingReplay)
		d := rep.Divergence
		if rep.Verdict != engine.ReplayDiverged || d == nil || rep.Ended {
			t.Fatalf("%+v, want diverged", rep)
		}
		if d.Seq != 2 || d.Expected.Key != "send-welcome" || d.Expected.Kind != store.KindRun ||
			d.Reached == nil || d.Reached.Key != "send-greeting" || d.Reached.Kind != store.KindRun {
			t.Fatalf("divergence %+v, want entry 2: run send-welcome expected, run send-greeting reached", d)
		}
		// The message is the one a live pass marks the run nondeterministic with.
		if !strings.Contains(d.Message, `the journal holds run "send-welcome" but the workflow reached run "send-greeting"`) {
			t.Fatalf("message %q", d.Message)
		}
	})

	t.Run("a journal that ends early stops the pass at the first step it does not have", func(t *testing.T) {
		r := onboardingReplay
		r.Journal = r.Journal[:3]
		rep := dryReplay(t, "examples.wasm", r)
		s := rep.Stopped
		if rep.Verdict != engine.ReplayCompatible || rep.Ended || s == nil || !s.New || s.Seq != 3 ||
			s.At.Key != "await-verify" || s.At.Kind != store.KindWait || rep.Replayed != 3 {
			t.Fatalf("%+v (stopped %+v), want compatible, stopped at new wait await-verify, entry 3", rep, s)
		}
	})

	t.Run("a step the module appends stops the pass there, compatible", func(t *testing.T) {
		// The same journal with n=4: the module reaches a fourth step the journal lacks, as a
		// module with a step appended would.
		r := stepsReplay
		r.Input = json.RawMessage(`{"n":4}`)
		rep := dryReplay(t, "examples.wasm", r)
		if s := rep.Stopped; rep.Verdict != engine.ReplayCompatible || s == nil || s.Seq != 3 || s.At.Key != "s#3" || !s.New {
			t.Fatalf("%+v (stopped %+v), want compatible, stopped at new step s#3", rep, rep.Stopped)
		}
	})

	t.Run("another version of the workflow that keeps its steps is compatible with its own output", func(t *testing.T) {
		rep := dryReplay(t, "hostile.wasm", stepsReplay)
		if rep.Verdict != engine.ReplayCompatible || !rep.Ended || !jsonEqual(t, rep.Output, []byte(`{"sum":3,"version":2}`)) {
			t.Fatalf("%+v (output %s), want compatible with output {sum:3,version:2}", rep, rep.Output)
		}
	})

	t.Run("a workflow that ends before its journal diverges", func(t *testing.T) {
		r := stepsReplay
		r.Input = json.RawMessage(`{"n":2}`)
		rep := dryReplay(t, "examples.wasm", r)
		d := rep.Divergence
		if rep.Verdict != engine.ReplayDiverged || d == nil || d.Seq != 2 || d.Reached != nil || d.Expected.Key != "s#2" {
			t.Fatalf("%+v (divergence %+v), want diverged at entry 2 (s#2) with nothing reached", rep, d)
		}
	})

	t.Run("a wait for another event diverges", func(t *testing.T) {
		r := onboardingReplay
		r.Journal = append([]store.Step(nil), r.Journal...)
		r.Journal[3].Event = "confirm"
		rep := dryReplay(t, "examples.wasm", r)
		d := rep.Divergence
		if rep.Verdict != engine.ReplayDiverged || d == nil || d.Seq != 3 || d.Expected.Event != "confirm" || d.Reached.Event != "verify" {
			t.Fatalf("%+v (divergence %+v), want diverged at entry 3: event confirm expected, verify reached", rep, d)
		}
	})

	t.Run("an unresolved entry stops the pass at it", func(t *testing.T) {
		r := onboardingReplay
		r.Journal = append([]store.Step(nil), r.Journal[:4]...)
		r.Journal[3].Status, r.Journal[3].CompletedAt = store.StepWaiting, nil
		rep := dryReplay(t, "examples.wasm", r)
		if s := rep.Stopped; rep.Verdict != engine.ReplayCompatible || s == nil || s.New || s.Seq != 3 || rep.Replayed != 3 {
			t.Fatalf("%+v (stopped %+v), want compatible, stopped at the unresolved wait, entry 3", rep, rep.Stopped)
		}
	})
}

// TestDryReplayGuestFault: a guest that traps during the dry pass ends it with the trap as the
// run's error, and the report carries what the guest wrote.
func TestDryReplayGuestFault(t *testing.T) {
	t.Parallel()
	rep := dryReplay(t, "hostile.wasm", engine.Replay{Workflow: "trap", RunID: "r1"})
	if !rep.Ended || rep.Error == nil || rep.Error.Code != "trap" {
		t.Fatalf("%+v, want ended with a trap", rep)
	}
	var stderr []string
	for _, l := range rep.Logs {
		if l.Stream == "stderr" {
			stderr = append(stderr, l.Message)
		}
	}
	if !strings.Contains(strings.Join(stderr, "\n"), "deadlock") {
		t.Fatalf("logs %+v carry no stderr line about the deadlock", rep.Logs)
	}
}

// TestDryReplayRefusesInvalidJournals: a journal from a file is untrusted; one no store could
// hold is refused before the guest runs.
func TestDryReplayRefusesInvalidJournals(t *testing.T) {
	t.Parallel()
	rt := runtimeForTests(t)
	mod, err := rt.Load(context.Background(), fixture(t, "examples.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for name, j := range map[string][]store.Step{
		"seq out of order":         {{Seq: 1, Key: "a", Kind: store.KindRun, Status: store.StepCompleted}},
		"empty key":                {{Seq: 0, Kind: store.KindRun, Status: store.StepCompleted}},
		"non-UTF-8 key":            {{Seq: 0, Key: "a\xff", Kind: store.KindRun, Status: store.StepCompleted}},
		"unknown kind":             {{Seq: 0, Key: "a", Kind: "fork", Status: store.StepCompleted}},
		"wrong status":             {{Seq: 0, Key: "a", Kind: store.KindSleep, Status: store.StepFailed}},
		"a parallel step retrying": {{Seq: 0, Key: "a", Kind: store.KindParallel, Status: store.StepRetrying}},
		"a branch's entry waiting": {{Seq: 0, Key: "a", Kind: store.KindBranch, Status: store.StepWaiting}},
		"output not JSON":          {{Seq: 0, Key: "a", Kind: store.KindRun, Status: store.StepCompleted, Output: json.RawMessage("{")}},
	} {
		_, err := engine.DryReplay(context.Background(), rt, mod, engine.Replay{Workflow: "steps", Input: json.RawMessage(`{"n":1}`), Journal: j})
		if !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return false
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// TestDryReplayAgreesWithTheLivePass: on a run in flight, the dry replay predicts what a
// redeploy does to it: the renamed module diverges with the very message the live pass marks
// the run nondeterministic with, and the compatible one stops at the wait the run is parked on.
func TestDryReplayAgreesWithTheLivePass(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	run := h.start("onboarding", map[string]any{"email": "dee@example.com", "delayMs": 1, "verifyTimeoutMs": 600000})
	h.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)
	r := engine.Replay{Workflow: run.Workflow, Input: run.Input, RunID: run.ID, CreatedAt: run.CreatedAt, Journal: h.steps(run.ID)}

	same := dryReplay(t, "examples.wasm", r)
	if s := same.Stopped; same.Verdict != engine.ReplayCompatible || s == nil || s.New || s.Seq != 3 || s.At.Key != "await-verify" {
		t.Fatalf("%+v (stopped %+v), want compatible, stopped at the wait the run is parked on", same, same.Stopped)
	}
	dry := dryReplay(t, "examples_renamed.wasm", r)
	if dry.Divergence == nil {
		t.Fatalf("%+v, want a divergence", dry)
	}
	h.deploy("examples_renamed.wasm", true)
	live := h.await(run.ID, settle, store.StatusNondeterministic)
	if live.Error == nil || live.Error.Message != dry.Divergence.Message {
		t.Fatalf("the live pass ended with %+v, the dry replay predicted %q", live.Error, dry.Divergence.Message)
	}
}
