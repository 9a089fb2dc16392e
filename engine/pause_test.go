package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestPauseHoldsAfterTheCurrentStep: a pause asked while a step callback runs lets the step
// finish and commit, and holds the run at its next durable call (here the run's end); the
// resume goes on from there without running the step again.
func TestPauseHoldsAfterTheCurrentStep(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}, 4), make(chan struct{})
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		arrived <- struct{}{}
		<-release
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	h := setup(t, harnessOptions{allowPrivateHosts: true, limits: store.Limits{AllowedHosts: []string{srv.URL}}})
	h.deploy("capabilities.wasm", false)
	run := h.start("http-fetch", map[string]any{"url": srv.URL + "/slow"})
	<-arrived
	asked, err := h.engine.PauseRun(context.Background(), store.DefaultTenant, run.ID)
	if err != nil || asked.Status != store.StatusRunning || asked.PausedAt == nil {
		t.Fatalf("pause: %s %v %v, want asked of the running run", asked.Status, asked.PausedAt, err)
	}
	close(release)
	r := h.await(run.ID, settle, store.StatusPaused)
	if r.PausedAt == nil {
		t.Fatal("a paused run has no PausedAt")
	}
	steps := h.steps(run.ID)
	if len(steps) != 1 || steps[0].Status != store.StepCompleted {
		t.Fatalf("journal %s, want the step committed before the hold", journalText(steps))
	}
	if _, err := h.engine.ResumeRun(context.Background(), store.DefaultTenant, run.ID, ""); err != nil {
		t.Fatal(err)
	}
	if r := h.await(run.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("resumed run %s %+v, want completed", r.Status, r.Error)
	}
	if n := requests.Load(); n != 1 {
		t.Fatalf("%d requests, want 1: the resume ran the committed step again", n)
	}
}

// TestPausedRunStaysPausedAcrossARestart: a sleeping run paused at once stays paused past its
// wake-up and across a new engine on the store, and its resume finishes it.
func TestPausedRunStaysPausedAcrossARestart(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{noStart: true})
	h.deploy("examples.wasm", false)
	first := newEngine(t, h)
	// The sleep is long enough that the pause lands inside it on a loaded machine: a pause
	// asked after the wake-up, of a host that took the run back, is only asked (CI once took
	// longer than a 200 ms sleep between seeing the sleep and pausing).
	run, _, err := first.StartRun(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: []byte(`{"n":2,"sleepMs":3000}`)})
	if err != nil {
		t.Fatal(err)
	}
	h.awaitStep(run.ID, "pause", store.StepSleeping, settle)
	if r, err := first.PauseRun(context.Background(), store.DefaultTenant, run.ID); err != nil || r.Status != store.StatusPaused {
		t.Fatalf("pause a sleeping run: %s %v, want paused at once (the sleep wakes at %v, now %v)",
			r.Status, err, h.step(run.ID, "pause").WakeAt, time.Now())
	}
	first.Stop()
	second := newEngine(t, h)
	// Past the sleep's end, with a host claiming, the run is still paused.
	wake := h.step(run.ID, "pause").WakeAt
	testenv.Await(t, settle, func() error {
		if time.Now().Before(wake.Add(300 * time.Millisecond)) {
			return errors.New("not yet past the sleep")
		}
		return nil
	})
	if r := h.await(run.ID, settle, store.StatusPaused); r.Activations != 1 {
		t.Fatalf("%d activations of a paused run, want 1", r.Activations)
	}
	list, _, err := second.ListRuns(context.Background(), store.DefaultTenant, store.RunFilter{Status: store.StatusPaused})
	if err != nil || len(list) != 1 || list[0].ID != run.ID {
		t.Fatalf("paused runs listed: %d %v", len(list), err)
	}
	if _, err := second.ResumeRun(context.Background(), store.DefaultTenant, run.ID, ""); err != nil {
		t.Fatal(err)
	}
	if r := h.await(run.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("resumed run %s %+v, want completed", r.Status, r.Error)
	}
}

// newEngine starts an engine on h's store, stopped at the test's end.
func newEngine(t *testing.T, h *harness) *engine.Engine {
	t.Helper()
	eng, err := engine.New(engine.Config{Store: h.store, Runtime: runtimeForTests(t), LeaseFor: 3 * time.Second, PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Stop)
	return eng
}

// TestPauseAskedOfADeadHostIsHeldByTheNext: a pause asked of a run whose host dies before it
// holds the run is held by the host that claims the run next, before any of it runs.
func TestPauseAskedOfADeadHostIsHeldByTheNext(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{noStart: true})
	h.deploy("examples.wasm", false)
	run, _, err := h.engine.StartRun(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: []byte(`{"n":2}`)})
	if err != nil {
		t.Fatal(err)
	}
	// A host claims it and dies: its lease runs out and it never hands the run back.
	claims, err := h.store.ClaimRuns(context.Background(), store.ClaimParams{Owner: "dead", Limit: 1, LeaseFor: 300 * time.Millisecond})
	if err != nil || len(claims) != 1 {
		t.Fatalf("claim: %d %v", len(claims), err)
	}
	if r, err := h.engine.PauseRun(context.Background(), store.DefaultTenant, run.ID); err != nil || r.Status != store.StatusRunning {
		t.Fatalf("pause: %s %v, want asked of the held run", r.Status, err)
	}
	newEngine(t, h)
	r := h.await(run.ID, settle, store.StatusPaused)
	if r.Activations != 2 {
		t.Fatalf("%d activations, want 2 (the dead host's and the hold)", r.Activations)
	}
	if n := strings.Count(h.logs.String(), "step ran"); n != 0 {
		t.Fatalf("%d step callbacks ran in a run held as it was claimed", n)
	}
	if steps := h.steps(run.ID); len(steps) != 0 {
		t.Fatalf("journal %s, want none", journalText(steps))
	}
}

// TestOnExhaustedPausePausesAndResumeRetries: a step whose attempts run out under onExhausted
// "pause" pauses the run instead of failing it; the resume tries the step once more.
func TestOnExhaustedPausePausesAndResumeRetries(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	run := h.start("charge-or-pause", map[string]any{"failAttempts": 3})
	h.await(run.ID, settle, store.StatusPaused)
	steps := h.steps(run.ID)
	if len(steps) != 1 || steps[0].Status != store.StepRetrying || steps[0].Attempt != 2 || steps[0].Error == nil || steps[0].Error.Code != "declined" {
		t.Fatalf("journal %s, want the charge retrying after 2 attempts", journalText(steps))
	}
	// The third attempt fails too: paused again.
	if _, err := h.engine.ResumeRun(context.Background(), store.DefaultTenant, run.ID, ""); err != nil {
		t.Fatal(err)
	}
	h.awaitStep(run.ID, "charge", store.StepRetrying, settle)
	testenv.Await(t, settle, func() error {
		if s := h.steps(run.ID); s[0].Attempt != 3 {
			return fmt.Errorf("attempt %d", s[0].Attempt)
		}
		return nil
	})
	h.await(run.ID, settle, store.StatusPaused)
	if _, err := h.engine.ResumeRun(context.Background(), store.DefaultTenant, run.ID, ""); err != nil {
		t.Fatal(err)
	}
	r := h.await(run.ID, settle)
	if r.Status != store.StatusCompleted || !strings.Contains(strings.ReplaceAll(string(r.Output), " ", ""), `"shipped":true`) {
		t.Fatalf("run %s %s %+v, want completed", r.Status, r.Output, r.Error)
	}
	if n := strings.Count(h.logs.String(), "charge attempt"); n != 4 {
		t.Fatalf("%d charge attempts, want 4", n)
	}
}

// TestPausedWorkflowCreatesPausedRuns: a paused workflow's new runs are created paused and
// run once it is resumed; a cancel of a paused run ends it at once.
func TestPausedWorkflowCreatesPausedRuns(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	ctx := context.Background()
	if _, err := h.engine.PauseWorkflow(ctx, store.DefaultTenant, "steps", ""); err != nil {
		t.Fatal(err)
	}
	a, b := h.start("steps", map[string]any{"n": 1}), h.start("steps", map[string]any{"n": 1})
	if a.Status != store.StatusPaused || b.Status != store.StatusPaused {
		t.Fatalf("runs of a paused workflow created %s and %s, want paused", a.Status, b.Status)
	}
	if _, err := h.engine.ResumeRun(ctx, store.DefaultTenant, a.ID, ""); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("resume one run of a paused workflow: %v, want a conflict", err)
	}
	if r, err := h.engine.CancelRun(ctx, store.DefaultTenant, b.ID, 0); err != nil || r.Status != store.StatusCancelled {
		t.Fatalf("cancel a paused run: %s %v, want cancelled at once", r.Status, err)
	}
	pauses, err := h.engine.WorkflowPauses(ctx, store.DefaultTenant)
	if err != nil || len(pauses) != 1 {
		t.Fatalf("pauses %+v %v", pauses, err)
	}
	n, err := h.engine.ResumeWorkflow(ctx, store.DefaultTenant, "steps", "")
	if err != nil || n != 1 {
		t.Fatalf("resume workflow: %d %v, want 1 run resumed", n, err)
	}
	if r := h.await(a.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("run %s %+v, want completed", r.Status, r.Error)
	}
	for _, bad := range []struct{ workflow, version string }{{"", ""}, {"nope", ""}, {"steps", "9"}, {"st/eps", ""}, {"steps", "\xff"}, {strings.Repeat("w", 300), ""}} {
		if _, err := h.engine.PauseWorkflow(ctx, store.DefaultTenant, bad.workflow, bad.version); err == nil {
			t.Fatalf("pause workflow %q version %q: no error", bad.workflow, bad.version)
		}
	}
}

// TestResumeOntoAnotherVersionGoesThroughTheGate: a paused run resumes onto a newer version of
// its workflow when a dry replay of its journal against that version passes (the upgrade
// gate's check), and goes on there; an event sent while it was paused is kept for it. A run
// whose journal the version's code does not replay is refused with where they part.
func TestResumeOntoAnotherVersionGoesThroughTheGate(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	ctx := context.Background()
	_, waiting := population(t, h, 1)
	run := waiting[0]
	if r, err := h.engine.PauseRun(ctx, store.DefaultTenant, run.ID); err != nil || r.Status != store.StatusPaused {
		t.Fatalf("pause a waiting run: %s %v, want paused at once", r.Status, err)
	}
	h.verify(run.ID) // resolves the wait; the run stays paused
	if r := h.getRun(run.ID); r.Status != store.StatusPaused {
		t.Fatalf("a signalled paused run is %s", r.Status)
	}
	held := h.start("charge-or-pause", map[string]any{"failAttempts": 5})
	h.await(held.ID, settle, store.StatusPaused)
	h.deploy("examples_appended.wasm", true) // onboarding version 2, a step appended
	if _, err := h.engine.ResumeRun(ctx, store.DefaultTenant, run.ID, "no-such-version"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("resume onto an unknown version: %v, want not found", err)
	}
	if _, err := h.engine.ResumeRun(ctx, store.DefaultTenant, run.ID, "\xff"); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("resume onto a malformed version: %v, want invalid", err)
	}
	moved, err := h.engine.ResumeRun(ctx, store.DefaultTenant, run.ID, "2")
	if err != nil || moved.Version != "2" {
		t.Fatalf("resume onto version 2: %s %v", moved.Version, err)
	}
	if r := h.await(run.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("moved run %s %+v\n%s", r.Status, r.Error, h.journalString(r.ID))
	}
	wantKeys(t, h.keys(run.ID), "create-user", "welcome-delay", "send-welcome", "await-verify", "record-verified")

	// charge-or-pause version 2 renamed its charge step: a run paused at it cannot move there.
	_, err = h.engine.ResumeRun(ctx, store.DefaultTenant, held.ID, "2")
	var refused *engine.ResumeRefused
	if !errors.As(err, &refused) || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("resume onto a diverging version: %v, want refused", err)
	}
	if c := refused.Check; c.Verdict != engine.GateDiverged || c.Divergence == nil || c.Divergence.Seq != 0 {
		t.Fatalf("refusal %+v, want diverged at entry 0", c)
	}
	if r := h.getRun(held.ID); r.Status != store.StatusPaused || r.Version != "1" {
		t.Fatalf("a refused run is %s on %s, want paused on 1", r.Status, r.Version)
	}
}

// step returns the run's journal entry key.
func (h *harness) step(runID, key string) store.Step {
	h.t.Helper()
	for _, s := range h.steps(runID) {
		if s.Key == key {
			return s
		}
	}
	h.t.Fatalf("run %s has no step %s", runID, key)
	return store.Step{}
}

// TestRunPolicyOnExhaustedPausesItsSteps: a run started with onExhausted "pause" in its own
// retry policy pauses when a step that names no such policy runs out of attempts, where the
// workflow would have compensated.
func TestRunPolicyOnExhaustedPausesItsSteps(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	run, _, err := h.engine.StartRun(context.Background(), store.DefaultTenant, engine.StartRequest{
		Workflow: "order-saga", Input: []byte(`{"orderId":"o-p","amount":3,"failPayment":true}`),
		Retry: &abi.RetryPolicy{Attempts: 1, OnExhausted: abi.ExhaustedPause},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.await(run.ID, settle, store.StatusPaused)
	wantKeys(t, h.keys(run.ID), "reserve-inventory", "charge-payment")
	if s := h.step(run.ID, "charge-payment"); s.Status != store.StepRetrying || s.Attempt != 3 {
		t.Fatalf("charge-payment %s after %d attempts, want retrying after 3", s.Status, s.Attempt)
	}
	// Without it, the same run compensates and fails.
	plain := h.start("order-saga", map[string]any{"orderId": "o-q", "amount": 3, "failPayment": true})
	if r := h.await(plain.ID, settle); r.Status != store.StatusFailed {
		t.Fatalf("a run without the policy ended %s, want failed", r.Status)
	}
}
