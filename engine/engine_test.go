package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

const (
	settle = 30 * time.Second // generous bound for a run to finish; never a timing assertion
)

func TestOnboardingSignalSentBeforeWaitResolvesIt(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	// The run sleeps 300ms before it waits, so the signal below arrives before the wait exists.
	run := h.start("onboarding", map[string]any{"email": "ada@example.com", "delayMs": 300, "verifyTimeoutMs": 60000})
	h.awaitStep(run.ID, "create-user", store.StepCompleted, settle)
	userID := h.userID(run.ID)
	res, err := h.engine.Signal(context.Background(), store.DefaultTenant, engine.SignalRequest{RunID: run.ID, Event: "verify", Payload: json.RawMessage(`{"userId":"` + userID + `","via":"email"}`)})
	delivered := res.Delivered
	if err != nil {
		t.Fatal(err)
	}
	if delivered {
		t.Fatal("signal reported delivered to a wait the run has not reached yet")
	}
	done := h.await(run.ID, settle)
	if done.Status != store.StatusCompleted {
		t.Fatalf("status %s, error %+v", done.Status, done.Error)
	}
	if !strings.Contains(string(done.Output), "verified") {
		t.Fatalf("output %s does not say verified", done.Output)
	}
	wantKeys(t, h.keys(run.ID), "create-user", "welcome-delay", "send-welcome", "await-verify")
	wait := h.steps(run.ID)[3]
	if wait.Status != store.StepCompleted || !strings.Contains(string(wait.Output), `"via"`) {
		t.Fatalf("wait step %s with %s, want completed with the signal payload", wait.Status, wait.Output)
	}
}

func TestOnboardingTimesOutAndNudges(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	// The wait must be seen waiting before it times out: 2 s leaves a loaded machine room
	// (the wait's window is what the poll has to land in).
	run := h.start("onboarding", map[string]any{"email": "bob@example.com", "delayMs": 10, "verifyTimeoutMs": 2000})
	h.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)
	// A signal that does not match the wait's match stays buffered and resolves nothing.
	res, err := h.engine.Signal(context.Background(), store.DefaultTenant, engine.SignalRequest{RunID: run.ID, Event: "verify", Payload: json.RawMessage(`{"userId":"someone-else"}`)})
	delivered := res.Delivered
	if err != nil || delivered {
		t.Fatalf("non-matching signal: delivered=%v err=%v", delivered, err)
	}
	done := h.await(run.ID, settle)
	if done.Status != store.StatusCompleted {
		t.Fatalf("status %s, error %+v", done.Status, done.Error)
	}
	wantKeys(t, h.keys(run.ID), "create-user", "welcome-delay", "send-welcome", "await-verify", "send-nudge")
	if s := h.steps(run.ID)[3]; s.Status != store.StepTimedOut {
		t.Fatalf("wait step is %s, want timed_out", s.Status)
	}
}

func TestStepRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	run := h.start("onboarding", map[string]any{"email": "cy@example.com", "delayMs": 1, "failWelcome": 2, "verifyTimeoutMs": 1})
	done := h.await(run.ID, settle)
	if done.Status != store.StatusCompleted {
		t.Fatalf("status %s, error %+v\n%s", done.Status, done.Error, h.journalString(run.ID))
	}
	for _, s := range h.steps(run.ID) {
		if s.Key == "send-welcome" {
			if s.Attempt != 3 || s.Status != store.StepCompleted {
				t.Fatalf("send-welcome: attempt %d status %s, want attempt 3 completed", s.Attempt, s.Status)
			}
			return
		}
	}
	t.Fatal("no send-welcome step")
}

func TestSagaCompensatesWhenPaymentFails(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	ok := h.start("order-saga", map[string]any{"orderId": "o-1", "amount": 42})
	bad := h.start("order-saga", map[string]any{"orderId": "o-2", "amount": 42, "failPayment": true})

	if r := h.await(ok.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("happy saga: %s %+v", r.Status, r.Error)
	}
	wantKeys(t, h.keys(ok.ID), "reserve-inventory", "charge-payment", "ship-order")

	h.await(bad.ID, settle)
	steps := h.steps(bad.ID)
	if len(steps) < 3 || steps[1].Key != "charge-payment" || steps[1].Status != store.StepFailed || steps[1].Attempt != 3 {
		t.Fatalf("charge-payment should have failed after 3 attempts:%s", h.journalString(bad.ID))
	}
	if steps[2].Key != "release-inventory" || steps[2].Status != store.StepCompleted {
		t.Fatalf("compensation release-inventory did not run:%s", h.journalString(bad.ID))
	}
	for _, s := range steps {
		if s.Key == "ship-order" {
			t.Fatal("a failed saga shipped the order")
		}
	}
}

func TestPollingLoopGetsStableKeys(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	run := h.start("poll", map[string]any{"until": 3, "intervalMs": 20})
	if r := h.await(run.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("status %s %+v", r.Status, r.Error)
	}
	wantKeys(t, h.keys(run.ID), "check-status", "backoff", "check-status#1", "backoff#1", "check-status#2")
}

func TestSubSecondSleepsWake(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	run := h.start("steps", map[string]any{"n": 4, "sleepMs": 50})
	r := h.await(run.ID, settle)
	if r.Status != store.StatusCompleted {
		t.Fatalf("status %s %+v", r.Status, r.Error)
	}
	wantKeys(t, h.keys(run.ID), "s", "pause", "s#1", "pause#1", "s#2", "pause#2", "s#3")
	// Guest log records carry the run and the step they were written in.
	if !strings.Contains(h.logs.String(), `"msg":"step ran index=2 attempt=1","tenant":"default","workflow":"steps","run":"`+run.ID+`","source":"guest","step":"s#2"`) {
		t.Fatalf("no log record of step s#2 with its run and step:\n%s", h.logs.tail(3000))
	}
	for _, s := range h.steps(run.ID) {
		if s.Kind == store.KindSleep && (s.Status != store.StepCompleted || s.WakeAt == nil || s.WakeAt.Sub(s.StartedAt) < 50*time.Millisecond) {
			t.Fatalf("sleep %s: status %s wake %v started %v", s.Key, s.Status, s.WakeAt, s.StartedAt)
		}
	}
}

func TestIdempotentStart(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	ctx := context.Background()
	req := engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":1}`), IdempotencyKey: "order-77"}
	first, created, err := h.engine.StartRun(ctx, store.DefaultTenant, req)
	if err != nil || !created {
		t.Fatalf("first start: created=%v err=%v", created, err)
	}
	req.Input = json.RawMessage(`{"n":5}`) // a retried request with other input still maps to the first run
	second, created, err := h.engine.StartRun(ctx, store.DefaultTenant, req)
	if err != nil || created || second.ID != first.ID {
		t.Fatalf("second start: id %s created=%v err=%v, want %s not created", second.ID, created, err, first.ID)
	}
	h.await(first.ID, settle)
	runs, _, err := h.engine.ListRuns(ctx, store.DefaultTenant, store.RunFilter{Workflow: "steps"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %d err %v, want exactly 1", len(runs), err)
	}
	wantKeys(t, h.keys(first.ID), "s")
}

func TestRedeployRenamingAStepIsNondeterministic(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	run := h.start("onboarding", map[string]any{"email": "dee@example.com", "delayMs": 1, "verifyTimeoutMs": 600000})
	h.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)

	// The same workflow version from a module whose send-welcome step was renamed.
	if _, err := h.engine.Deploy(context.Background(), store.DefaultTenant, fixture(t, "examples_renamed.wasm"), false); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("redeploying a bound version without replace: %v, want conflict", err)
	}
	h.deploy("examples_renamed.wasm", true)
	r := h.await(run.ID, settle, store.StatusNondeterministic)
	if r.Error == nil || r.Error.Code != abi.CodeNondeterministic || !strings.Contains(r.Error.Message, "send-welcome") {
		t.Fatalf("error %+v should name the journaled step", r.Error)
	}
	// Deploying the compatible module again resumes the run where it stopped.
	h.deploy("examples.wasm", true)
	h.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)
	userID := h.userID(run.ID)
	if _, err := h.engine.Signal(context.Background(), store.DefaultTenant, engine.SignalRequest{RunID: run.ID, Event: "verify", Payload: json.RawMessage(`{"userId":"` + userID + `"}`)}); err != nil {
		t.Fatal(err)
	}
	if r := h.await(run.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("after the fix: %s %+v", r.Status, r.Error)
	}
}

func TestBroadcastResolvesWaitingRuns(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	run := h.start("onboarding", map[string]any{"email": "eve@example.com", "delayMs": 1, "verifyTimeoutMs": 600000})
	h.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)
	userID := h.userID(run.ID)
	res, err := h.engine.Broadcast(context.Background(), store.DefaultTenant, engine.BroadcastRequest{Event: "verify", Payload: json.RawMessage(`{"userId":"` + userID + `"}`)})
	if err != nil || res.Resolved != 1 {
		t.Fatalf("broadcast resolved %d (err %v), want 1", res.Resolved, err)
	}
	if r := h.await(run.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("status %s %+v", r.Status, r.Error)
	}
}

func TestCancelStopsASpinningStep(t *testing.T) {
	t.Parallel()
	// One slot: while the spinning step holds it nothing else can run, so the echo run
	// completing below proves the spin was stopped.
	h := setup(t, harnessOptions{concurrency: 1})
	h.deploy("hostile.wasm", false)
	spin := h.start("spin-step", nil)
	h.await(spin.ID, settle, store.StatusRunning)
	// A real pause, not a clock's: the guest's spin runs in wazero on its own goroutine, and
	// the cancel must stop it mid-loop; nothing reports that it has started spinning.
	time.Sleep(200 * time.Millisecond)
	if _, err := h.engine.TerminateRun(context.Background(), store.DefaultTenant, spin.ID); err != nil {
		t.Fatal(err)
	}
	echo := h.start("echo", map[string]any{"hello": "world"})
	if r := h.await(echo.ID, settle); r.Status != store.StatusCompleted || !strings.Contains(string(r.Output), "world") {
		t.Fatalf("echo after cancel: %s %s %+v", r.Status, r.Output, r.Error)
	}
	if r := h.await(spin.ID, settle); r.Status != store.StatusCancelled {
		t.Fatalf("spin-step is %s, want cancelled", r.Status)
	}
	if _, err := h.engine.TerminateRun(context.Background(), store.DefaultTenant, spin.ID); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("cancelling a cancelled run: %v, want conflict", err)
	}
}

func TestHostileGuestsFailTheirRunOnly(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{limits: store.Limits{ActivationTimeoutMs: 10000, MemoryPages: 256}})
	h.deploy("hostile.wasm", false)
	cases := testenv.HostileRuns
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = h.start(c.Workflow, nil).ID
	}
	// While the hostile runs fail, ordinary runs keep completing.
	for range 3 {
		echo := h.start("echo", map[string]any{"n": 1})
		if r := h.await(echo.ID, settle); r.Status != store.StatusCompleted {
			t.Fatalf("echo: %s %+v", r.Status, r.Error)
		}
	}
	for i, c := range cases {
		r := h.await(ids[i], settle)
		if r.Status != store.StatusFailed || r.Error == nil || r.Error.Code != c.Code || !strings.Contains(r.Error.Message, c.Contains) {
			t.Errorf("%s: status %s error %+v, want failed with %s containing %q", c.Workflow, r.Status, r.Error, c.Code, c.Contains)
		}
	}
}

func TestDeployRejectsBadModules(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{noStart: true})
	ctx := context.Background()
	for name, wasm := range map[string][]byte{
		"empty":     nil,
		"not wasm":  []byte("hello, world"),
		"truncated": fixture(t, "examples.wasm")[:1000],
	} {
		if _, err := h.engine.Deploy(ctx, store.DefaultTenant, wasm, false); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, _, err := h.engine.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown workflow: %v, want not found", err)
	}
	h.deploy("examples.wasm", false)
	if _, _, err := h.engine.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":`)}); !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("malformed input: %v, want ErrInvalid", err)
	}
	if _, err := h.engine.Signal(ctx, store.DefaultTenant, engine.SignalRequest{RunID: "00000000-0000-0000-0000-000000000000", Event: "verify", Payload: nil}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("signal to an unknown run: %v, want not found", err)
	}
}

// A step that outlives the lease keeps its run: the heartbeat renews the lease, so a second
// engine polling the same store never takes the run over and the step runs once.
func TestHeartbeatKeepsALongStep(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("hostile.wasm", false)
	otherLogs := &logBuffer{}
	other, err := engine.New(engine.Config{
		Store: h.store, Runtime: runtimeForTests(t), LeaseFor: 3 * time.Second, PollInterval: 200 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(otherLogs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	run := h.start("slow-step", map[string]any{"ms": 7000}) // more than twice the 3s lease
	h.await(run.ID, settle, store.StatusRunning)
	if err := other.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer other.Stop()
	r := h.await(run.ID, settle)
	if r.Status != store.StatusCompleted || string(r.Output) != "7000" {
		t.Fatalf("slow step: %s %s %+v", r.Status, r.Output, r.Error)
	}
	ran := strings.Count(h.logs.String()+otherLogs.String(), "slow step ran")
	if ran != 1 {
		t.Fatalf("the slow step ran %d times; a lost lease let another engine take the run", ran)
	}
	if r.Activations != 1 {
		t.Fatalf("the run was activated %d times, want 1", r.Activations)
	}
}

func TestRunsStayOnTheirVersionWhileNewRunsTakeTheLatest(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	old := h.start("steps", map[string]any{"n": 3, "sleepMs": 300})
	h.awaitStep(old.ID, "s", store.StepCompleted, settle)
	h.deploy("hostile.wasm", false) // declares steps version 2
	fresh := h.start("steps", map[string]any{"n": 3})
	if old.Version != "1" || fresh.Version != "2" || fresh.Digest == old.Digest {
		t.Fatalf("versions %s (%.8s) and %s (%.8s)", old.Version, old.Digest, fresh.Version, fresh.Digest)
	}
	if r := h.await(old.ID, settle); r.Status != store.StatusCompleted || decode[map[string]int](t, r.Output)["sum"] != 3 || strings.Contains(string(r.Output), "version") {
		t.Fatalf("the version 1 run: %s %s %+v", r.Status, r.Output, r.Error)
	}
	if r := h.await(fresh.ID, settle); r.Status != store.StatusCompleted || decode[map[string]int](t, r.Output)["version"] != 2 {
		t.Fatalf("the version 2 run: %s %s %+v", r.Status, r.Output, r.Error)
	}
	pinned, _, err := h.engine.StartRun(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: "steps", Version: "1", Input: json.RawMessage(`{"n":1}`)})
	if err != nil || pinned.Version != "1" || pinned.Digest != old.Digest {
		t.Fatalf("starting version 1 explicitly: %+v %v", pinned, err)
	}
}

func TestAwaitRunReturnsTheEnd(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	ok := h.start("steps", map[string]any{"n": 3})
	r, err := h.engine.AwaitRun(ctx, store.DefaultTenant, ok.ID)
	// Compared as JSON: a run that ended before the waiter registered is read back from the
	// store, and Postgres's jsonb writes `{"sum": 3}` for the guest's `{"sum":3}`.
	if err != nil || r.Status != store.StatusCompleted || decode[map[string]int](t, r.Output)["sum"] != 3 {
		t.Fatalf("await: %s %s %v", r.Status, r.Output, err)
	}
	// The run as recorded matches what the waiter was handed, last step included.
	if got := h.await(ok.ID, settle); got.Status != r.Status || decode[map[string]int](t, got.Output)["sum"] != 3 {
		t.Fatalf("stored run %s %s", got.Status, got.Output)
	}
	wantKeys(t, h.keys(ok.ID), "s", "s#1", "s#2")
	waiting := h.start("onboarding", map[string]any{"email": "aw@example.com", "delayMs": 1, "verifyTimeoutMs": 600000})
	h.awaitStep(waiting.ID, "await-verify", store.StepWaiting, settle)
	go func() { _, _ = h.engine.TerminateRun(context.Background(), store.DefaultTenant, waiting.ID) }()
	if r, err := h.engine.AwaitRun(ctx, store.DefaultTenant, waiting.ID); err != nil || r.Status != store.StatusCancelled {
		t.Fatalf("await a cancelled run: %s %v", r.Status, err)
	}
}

func TestStartAndAwait(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	req := engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":2}`), IdempotencyKey: "once"}
	r, err := h.engine.StartAndAwait(ctx, store.DefaultTenant, req)
	if err != nil || r.Status != store.StatusCompleted || decode[map[string]int](t, r.Output)["sum"] != 1 {
		t.Fatalf("start and await: %s %s %v", r.Status, r.Output, err)
	}
	// The same key again: the same, finished run.
	again, err := h.engine.StartAndAwait(ctx, store.DefaultTenant, req)
	if err != nil || again.ID != r.ID || again.Status != store.StatusCompleted {
		t.Fatalf("repeat: %s %s %v", again.ID, again.Status, err)
	}
}
