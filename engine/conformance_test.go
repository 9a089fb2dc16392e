package engine_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// guestFixtures are the example modules, one per guest language, built from examples/wasm/*.
// They implement the same workflows, so every scenario below must give each of them the same
// run outcome and the same journal as the Go reference.
var guestFixtures = []struct{ lang, file string }{
	{"go", "examples.wasm"},
	{"assemblyscript", "examples_as.wasm"},
	{"rust", "examples_rust.wasm"},
	{"extism-go", "extism_go.wasm"},
	{"extism-as", "extism_as.wasm"},
}

// TinyGo is an optional toolchain (guest-sdk/go/tinygo): `make testdata/tinygo` builds the Go
// examples with it into testdata/tinygo/, which is not committed, and the suite covers that
// build whenever it is there.
func init() {
	if _, err := os.Stat(filepath.Join(testenv.Root(), "testdata", "tinygo", "examples.wasm")); err == nil {
		guestFixtures = append(guestFixtures, struct{ lang, file string }{"tinygo", "tinygo/examples.wasm"})
	}
}

// transcript is what a scenario observed of one run, with everything that legitimately differs
// between two executions (ids, timestamps, sequence of activations) left out.
type transcript struct {
	Status store.RunStatus
	Output any
	Error  string // "code: message" of a failed run
	Steps  []stepRecord
	// Chain is, for a run that continued as new or was retried, every run of its chain: its
	// status, attempt and journal keys, the first run first.
	Chain []string
	// Queries are the answers of the queries a scenario asked the run (query_test.go).
	Queries []any
}

type stepRecord struct {
	Key     string
	Kind    store.StepKind
	Status  store.StepStatus
	Attempt int
	Output  any
	Error   string
}

// conformanceScenario drives one run on a fresh engine with the language's fixture deployed
// and returns its transcript. Scenarios make their own assertions too, so that the Go reference
// itself is checked and an agreement between languages can never be an agreement on nonsense.
type conformanceScenario struct {
	name string
	run  func(t *testing.T, h *harness, store store.Store) transcript
}

var conformanceScenarios = []conformanceScenario{
	{"OnboardingResolvedBySignal", func(t *testing.T, h *harness, _ store.Store) transcript {
		run := h.start("onboarding", map[string]any{"email": "Ada@Example.com", "delayMs": 10, "verifyTimeoutMs": 60000})
		h.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)
		payload := fmt.Sprintf(`{"userId":%q,"via":"email"}`, h.userID(run.ID))
		if _, err := h.engine.Signal(context.Background(), store.DefaultTenant, engine.SignalRequest{RunID: run.ID, Event: "verify", Payload: json.RawMessage(payload)}); err != nil {
			t.Fatal(err)
		}
		tr := h.transcript(h.await(run.ID, settle))
		wantTranscript(t, tr, store.StatusCompleted, "create-user", "welcome-delay", "send-welcome", "await-verify")
		return tr
	}},
	{"SignalIDDeliversOnce", func(t *testing.T, h *harness, _ store.Store) transcript {
		// A client retries its signal with the same id (a lost response, say): the run takes
		// the first and the repeat is acknowledged without reaching the guest.
		run := h.start("onboarding", map[string]any{"email": "Eve@Example.com", "delayMs": 10, "verifyTimeoutMs": 60000})
		h.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)
		for i, via := range []string{"email", "retry"} {
			payload := fmt.Sprintf(`{"userId":%q,"via":%q}`, h.userID(run.ID), via)
			res, err := h.engine.Signal(context.Background(), store.DefaultTenant, engine.SignalRequest{RunID: run.ID, Event: "verify", Payload: json.RawMessage(payload), SignalID: "verify-1"})
			if err != nil {
				t.Fatal(err)
			}
			if want := (store.SignalResult{Delivered: true, Duplicate: i > 0}); res != want {
				t.Fatalf("sending %d: %+v, want %+v", i+1, res, want)
			}
		}
		tr := h.transcript(h.await(run.ID, settle))
		wantTranscript(t, tr, store.StatusCompleted, "create-user", "welcome-delay", "send-welcome", "await-verify")
		if got := fmt.Sprint(tr.Steps[3].Output); !strings.Contains(got, "via:email") {
			t.Fatalf("the wait took %s, want the first sending's payload", got)
		}
		return tr
	}},
	{"SignalWithStart", func(t *testing.T, h *harness, _ store.Store) transcript {
		// The caller names the run ("signup-grace"); the first signal-with-start creates it with
		// the verification already kept, so its wait finds it; a second, once the run is over,
		// starts another run under the same name.
		email := "Grace@Example.com"
		sum := sha256.Sum256([]byte(strings.ToLower(email)))
		payload := fmt.Sprintf(`{"userId":"u-%x","via":"signal-with-start"}`, sum[:6])
		req := engine.SignalWithStartRequest{Start: engine.StartRequest{Workflow: "onboarding", IdempotencyKey: "signup-grace",
			Input: json.RawMessage(`{"email":"` + email + `","delayMs":10,"verifyTimeoutMs":60000}`)}, Event: "verify", Payload: json.RawMessage(payload)}
		first, err := h.engine.SignalWithStart(context.Background(), store.DefaultTenant, req)
		if err != nil {
			t.Fatal(err)
		}
		if !first.Created || first.Signal != (store.SignalResult{}) {
			t.Fatalf("first signal-with-start: %+v, want a run created with the event kept", first)
		}
		tr := h.transcript(h.await(first.Run.ID, settle))
		wantTranscript(t, tr, store.StatusCompleted, "create-user", "welcome-delay", "send-welcome", "await-verify")
		if got := fmt.Sprint(tr.Steps[3].Output); !strings.Contains(got, "via:signal-with-start") {
			t.Fatalf("the wait took %s, want the signal-with-start's payload", got)
		}
		second, err := h.engine.SignalWithStart(context.Background(), store.DefaultTenant, req)
		if err != nil {
			t.Fatal(err)
		}
		if !second.Created || second.Run.ID == first.Run.ID {
			t.Fatalf("signal-with-start after the run ended: %+v, want a new run", second)
		}
		if again := h.transcript(h.await(second.Run.ID, settle)); !reflect.DeepEqual(again, tr) {
			t.Fatalf("the second run differs from the first:\n %+v\n %+v", again, tr)
		}
		return tr
	}},
	{"StepAttemptTimesOut", func(t *testing.T, h *harness, _ store.Store) transcript {
		// The first attempt never returns: the host stops it at its timeout, journals it as
		// timed out and retries the step, whose second attempt returns.
		run := h.start("timeouts", map[string]any{"hangAttempts": 1, "timeoutMs": 200})
		tr := h.transcript(h.await(run.ID, settle))
		wantTranscript(t, tr, store.StatusCompleted, "slow-call")
		if s := tr.Steps[0]; s.Status != store.StepCompleted || s.Attempt != 2 || fmt.Sprint(tr.Output) != "map[attempt:2]" {
			t.Fatalf("want slow-call completed on attempt 2 and the run's output saying so: %+v", tr)
		}
		return tr
	}},
	{"StepTimesOutOnEveryAttempt", func(t *testing.T, h *harness, _ store.Store) transcript {
		// Every attempt hangs: the step's final failure, code timeout, reaches the workflow,
		// which completes saying so.
		run := h.start("timeouts", map[string]any{"hangAttempts": 5, "timeoutMs": 100, "attempts": 2})
		tr := h.transcript(h.await(run.ID, settle))
		wantTranscript(t, tr, store.StatusCompleted, "slow-call")
		if s := tr.Steps[0]; s.Status != store.StepFailed || s.Attempt != 2 ||
			s.Error != "timeout: the step's attempt ran past its timeout of 100ms" || fmt.Sprint(tr.Output) != "map[failed:timeout]" {
			t.Fatalf("want slow-call failed with timeout on attempt 2 and the workflow told: %+v", tr)
		}
		return tr
	}},
	{"RelaySignalsAWaitingRun", func(t *testing.T, h *harness, _ store.Store) transcript {
		// A workflow sends the event another run of the tenant waits for, from a step.
		target := h.start("onboarding", map[string]any{"email": "Relay@Example.com", "delayMs": 10, "verifyTimeoutMs": 60000})
		h.awaitStep(target.ID, "await-verify", store.StepWaiting, settle)
		relay := h.start("relay", map[string]any{"runId": target.ID, "event": "verify",
			"payload": map[string]any{"userId": h.userID(target.ID), "via": "relay"}})
		tr := h.transcript(h.await(relay.ID, settle))
		wantTranscript(t, tr, store.StatusCompleted, "notify")
		if fmt.Sprint(tr.Output) != "map[state:delivered]" {
			t.Fatalf("relay's output %v, want the event delivered", tr.Output)
		}
		done := h.await(target.ID, settle)
		if done.Status != store.StatusCompleted || !strings.Contains(string(done.Output), "verified via relay") {
			t.Fatalf("the target run: %s %s, want it verified by the relayed event", done.Status, done.Output)
		}
		return tr
	}},
	{"RelayRefused", func(t *testing.T, h *harness, _ store.Store) transcript {
		// An event for a run the tenant does not have is refused; the step fails with the
		// host's code, and so does the run.
		run := h.start("relay", map[string]any{"runId": "00000000-0000-4000-8000-000000000000", "event": "verify"})
		tr := h.transcript(h.await(run.ID, settle))
		wantTranscript(t, tr, store.StatusFailed, "notify")
		if s := tr.Steps[0]; s.Status != store.StepFailed || !strings.HasPrefix(s.Error, "event_refused: ") || !strings.HasPrefix(tr.Error, "event_refused: ") {
			t.Fatalf("want notify and the run failed with event_refused: %+v", tr)
		}
		return tr
	}},
	{"RunDeadlineWhileWaiting", func(t *testing.T, h *harness, _ store.Store) transcript {
		// A workflow deadline: the run waits for an event for ten minutes, but its start gave
		// it a second and a half; it is woken at its deadline and failed.
		run, _, err := h.engine.StartRun(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: "onboarding",
			Input: json.RawMessage(`{"email":"late@example.com","delayMs":1,"verifyTimeoutMs":600000}`), TimeoutMs: 1500})
		if err != nil {
			t.Fatal(err)
		}
		if run.Deadline == nil || run.Deadline.Sub(run.CreatedAt) < time.Second {
			t.Fatalf("the run's deadline %v, created %v: want 1.5 s after its start", run.Deadline, run.CreatedAt)
		}
		tr := h.transcript(h.await(run.ID, settle))
		wantTranscript(t, tr, store.StatusFailed, "create-user", "welcome-delay", "send-welcome", "await-verify")
		if tr.Error != "run_timeout: the run ran past its deadline" || tr.Steps[3].Status != store.StepWaiting {
			t.Fatalf("want the run failed with run_timeout at its wait: %+v", tr)
		}
		return tr
	}},
	{"RunDeadlineInALoop", func(t *testing.T, h *harness, _ store.Store) transcript {
		// A polling loop that would run for a minute, stopped by its deadline at a durable call.
		run, _, err := h.engine.StartRun(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: "poll",
			Input: json.RawMessage(`{"until":600,"intervalMs":100}`), TimeoutMs: 1000})
		if err != nil {
			t.Fatal(err)
		}
		r := h.await(run.ID, settle)
		if r.Status != store.StatusFailed || r.Error == nil || r.Error.Code != abi.CodeRunTimeout {
			t.Fatalf("want the loop failed with run_timeout: %s %+v", r.Status, r.Error)
		}
		// How many checks fit in the second differs from pass to pass: the transcript keeps
		// only the outcome.
		return transcript{Status: r.Status, Error: errorString(r.Error)}
	}},
	{"ContinueAsNewRunsPastTheStepCap", func(t *testing.T, h *harness, _ store.Store) transcript {
		// A loop of 4 turns of 3 steps each, 12 steps in all, with a step cap of 4 per run:
		// each turn continues as new, so no run passes the cap. The idempotency key moves to
		// the newest run of the chain, and an event kept for a run moves with it.
		if _, err := h.engine.SetTenantLimits(context.Background(), store.DefaultTenant, store.Limits{MaxStepsPerRun: 4}); err != nil {
			t.Fatal(err)
		}
		// The cap holds: the same 6 ticks in one run fail it.
		if r := h.await(h.start("ticker", map[string]any{"turns": 1, "ticks": 6}).ID, settle); r.Status != store.StatusFailed ||
			r.Error == nil || r.Error.Code != abi.CodeStepLimit {
			t.Fatalf("6 steps in one run under a cap of 4: %s %+v, want step_limit", r.Status, r.Error)
		}
		run, _, err := h.engine.StartRun(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: "ticker",
			Input: json.RawMessage(`{"turns":4,"ticks":3}`), IdempotencyKey: "ticker-1"})
		if err != nil {
			t.Fatal(err)
		}
		chain := h.awaitChain(run.ID, settle)
		last := chain[len(chain)-1]
		tr := h.transcript(last)
		wantTranscript(t, tr, store.StatusCompleted, "tick", "tick#1", "tick#2")
		if fmt.Sprint(tr.Output) != "map[total:78 turns:4]" || len(chain) != 4 {
			t.Fatalf("want 4 runs and the last one's output the sum of 1..12: %d runs, %+v", len(chain), tr)
		}
		for i, r := range chain {
			tr.Chain = append(tr.Chain, fmt.Sprintf("%s attempt %d: %s", r.Status, r.Attempt, strings.Join(h.keys(r.ID), ",")))
			if i < len(chain)-1 && (r.Status != store.StatusContinued || r.IdempotencyKey != "") {
				t.Fatalf("run %d of the chain: %s with key %q, want continued without its key", i, r.Status, r.IdempotencyKey)
			}
		}
		if last.IdempotencyKey != "ticker-1" {
			t.Fatalf("the last run's key %q, want the chain's", last.IdempotencyKey)
		}
		again, created, err := h.engine.StartRun(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: "ticker",
			Input: json.RawMessage(`{}`), IdempotencyKey: "ticker-1"})
		if err != nil || created || again.ID != last.ID {
			t.Fatalf("a start with the chain's key: %s created=%v %v, want the newest run %s", again.ID, created, err, last.ID)
		}
		return tr
	}},
	{"RunRetriedByItsPolicy", func(t *testing.T, h *harness, _ store.Store) transcript {
		// A run started with a retry policy of 2 attempts fails: a fresh run retries it with the
		// same input, and fails too, which ends the chain.
		run, _, err := h.engine.StartRun(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: "order-saga",
			Input: json.RawMessage(`{"orderId":"o-9","amount":5,"failPayment":true}`),
			Retry: &abi.RetryPolicy{Attempts: 2, Backoff: abi.BackoffFixed, BaseMs: 50}})
		if err != nil {
			t.Fatal(err)
		}
		chain := h.awaitChain(run.ID, 3*settle)
		if len(chain) != 2 {
			t.Fatalf("a chain of %d runs, want 2", len(chain))
		}
		first, second := h.transcript(chain[0]), h.transcript(chain[1])
		if !reflect.DeepEqual(first, second) || chain[1].Attempt != 2 || chain[1].ContinuedAs != "" ||
			string(chain[1].Input) != string(chain[0].Input) || chain[1].Retry == nil || chain[1].Retry.Attempts != 2 {
			t.Fatalf("want the retry to repeat the first run with the same input and policy as attempt 2:\n %+v\n %+v\n %+v", first, second, chain[1])
		}
		wantTranscript(t, second, store.StatusFailed, "reserve-inventory", "charge-payment", "release-inventory")
		for _, r := range chain {
			second.Chain = append(second.Chain, fmt.Sprintf("%s attempt %d", r.Status, r.Attempt))
		}
		return second
	}},
	{"CancelCompensates", func(t *testing.T, h *harness, _ store.Store) transcript {
		// A cancel reaches the saga in its ten-minute hold: the sleep ends early with the
		// cancellation, the saga releases the reservation (a step that runs as usual) and
		// returns the cancellation, and the run ends cancelled (ABI.md §4.15).
		run := h.start("order-saga", map[string]any{"orderId": "o-11", "amount": 9, "holdMs": 600000})
		h.awaitStep(run.ID, "hold", store.StepSleeping, settle)
		asked, err := h.engine.CancelRun(context.Background(), store.DefaultTenant, run.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if asked.CancelRequestedAt == nil || asked.CancelGraceUntil == nil || asked.Status.Terminal() {
			t.Fatalf("the cancel's answer: %+v, want the live run with its cancel recorded", asked)
		}
		tr := h.transcript(h.await(run.ID, settle))
		wantTranscript(t, tr, store.StatusCancelled, "reserve-inventory", "hold", "release-inventory")
		if tr.Steps[1].Status != store.StepCancelled || tr.Steps[2].Status != store.StepCompleted ||
			tr.Error != "cancelled: sleep hold: the run was cancelled" {
			t.Fatalf("want the hold cancelled, the release run and the run cancelled: %+v", tr)
		}
		return tr
	}},
	{"CancelWhileWaiting", func(t *testing.T, h *harness, _ store.Store) transcript {
		// A cancel reaches a run waiting for an event: the wait ends with the cancellation,
		// which the workflow returns; a signal after it finds the run ended.
		run := h.start("onboarding", map[string]any{"email": "Cy@Example.com", "delayMs": 10, "verifyTimeoutMs": 600000})
		h.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)
		if _, err := h.engine.CancelRun(context.Background(), store.DefaultTenant, run.ID, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		tr := h.transcript(h.await(run.ID, settle))
		wantTranscript(t, tr, store.StatusCancelled, "create-user", "welcome-delay", "send-welcome", "await-verify")
		if tr.Steps[3].Status != store.StepCancelled || tr.Error != "cancelled: wait await-verify: the run was cancelled" {
			t.Fatalf("want the wait cancelled and the run with it: %+v", tr)
		}
		_, err := h.engine.Signal(context.Background(), store.DefaultTenant, engine.SignalRequest{RunID: run.ID, Event: "verify", Payload: json.RawMessage(`{}`)})
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a signal to the cancelled run: %v, want a conflict", err)
		}
		return tr
	}},
	{"RestartFromScratchAndFromAStep", func(t *testing.T, h *harness, _ store.Store) transcript {
		// A failed saga is restarted twice with a card that works: from scratch (every step
		// runs again) and from its charge (its reservation is kept, replayed, not run again).
		failed := h.await(h.start("order-saga", map[string]any{"orderId": "o-12", "amount": 4, "failPayment": true}).ID, settle)
		if failed.Status != store.StatusFailed {
			t.Fatalf("the first run is %s, want failed", failed.Status)
		}
		ctx := context.Background()
		if _, err := h.engine.RestartRun(ctx, store.DefaultTenant, engine.RestartRequest{RunID: failed.ID, FromStep: "ship-order"}); !errors.Is(err, engine.ErrInvalid) {
			t.Fatalf("restart from a step the run never reached: %v, want invalid", err)
		}
		input := json.RawMessage(`{"orderId":"o-12","amount":4}`)
		fresh, err := h.engine.RestartRun(ctx, store.DefaultTenant, engine.RestartRequest{RunID: failed.ID, Input: input})
		if err != nil {
			t.Fatal(err)
		}
		again := h.transcript(h.await(fresh.ID, settle))
		wantTranscript(t, again, store.StatusCompleted, "reserve-inventory", "charge-payment", "ship-order")
		resumed, err := h.engine.RestartRun(ctx, store.DefaultTenant, engine.RestartRequest{RunID: failed.ID, Input: input, FromStep: "charge-payment"})
		if err != nil {
			t.Fatal(err)
		}
		r := h.await(resumed.ID, settle)
		tr := h.transcript(r)
		wantTranscript(t, tr, store.StatusCompleted, "reserve-inventory", "charge-payment", "ship-order")
		// A step run again would be written again: its completion time would be the rerun's.
		if kept, src := h.steps(resumed.ID)[0], h.steps(failed.ID)[0]; !kept.StartedAt.Equal(src.StartedAt) || string(kept.Output) != string(src.Output) ||
			kept.CompletedAt == nil || src.CompletedAt == nil || !kept.CompletedAt.Equal(*src.CompletedAt) {
			t.Fatalf("the kept reservation %+v is not the failed run's %+v: it ran again", kept, src)
		}
		if r.RestartedFrom != failed.ID || fresh.RestartedFrom != failed.ID || !reflect.DeepEqual(tr.Output, again.Output) {
			t.Fatalf("want both restarts linked to the failed run and ending alike: %+v %+v", r, fresh)
		}
		return tr
	}},
	{"OnboardingTimesOut", func(t *testing.T, h *harness, _ store.Store) transcript {
		run := h.start("onboarding", map[string]any{"email": "bob@example.com", "delayMs": 1, "failWelcome": 1, "verifyTimeoutMs": 100})
		tr := h.transcript(h.await(run.ID, settle))
		wantTranscript(t, tr, store.StatusCompleted, "create-user", "welcome-delay", "send-welcome", "await-verify", "send-nudge")
		if tr.Steps[2].Attempt != 2 || tr.Steps[3].Status != store.StepTimedOut {
			t.Fatalf("want send-welcome on attempt 2 and await-verify timed out: %+v", tr.Steps)
		}
		return tr
	}},
	{"SagaCompensates", func(t *testing.T, h *harness, _ store.Store) transcript {
		run := h.start("order-saga", map[string]any{"orderId": "o-7", "amount": 42, "failPayment": true})
		tr := h.transcript(h.await(run.ID, settle))
		wantTranscript(t, tr, store.StatusFailed, "reserve-inventory", "charge-payment", "release-inventory")
		if tr.Steps[1].Status != store.StepFailed || tr.Steps[1].Attempt != 3 || !strings.HasPrefix(tr.Error, "card_declined: ") {
			t.Fatalf("want charge-payment failed after 3 attempts and the run failed with card_declined: %+v", tr)
		}
		return tr
	}},
	{"SagaShips", func(t *testing.T, h *harness, _ store.Store) transcript {
		run := h.start("order-saga", map[string]any{"orderId": "o-8", "amount": 7})
		tr := h.transcript(h.await(run.ID, settle))
		wantTranscript(t, tr, store.StatusCompleted, "reserve-inventory", "charge-payment", "ship-order")
		return tr
	}},
	{"OnExhaustedPausesAndResumeRetries", func(t *testing.T, h *harness, _ store.Store) transcript {
		// The charge fails both its attempts: the run pauses instead of failing, its charge
		// kept retrying; the resume's extra attempt succeeds.
		run := h.start("charge-or-pause", map[string]any{"failAttempts": 2})
		paused := h.transcript(h.await(run.ID, settle, store.StatusPaused))
		wantTranscript(t, paused, store.StatusPaused, "charge")
		if s := paused.Steps[0]; s.Status != store.StepRetrying || s.Attempt != 2 || !strings.HasPrefix(s.Error, "declined: ") {
			t.Fatalf("want the charge retrying after 2 attempts: %+v", paused.Steps)
		}
		if _, err := h.engine.ResumeRun(context.Background(), store.DefaultTenant, run.ID, ""); err != nil {
			t.Fatal(err)
		}
		tr := h.transcript(h.await(run.ID, settle))
		wantTranscript(t, tr, store.StatusCompleted, "charge", "ship")
		if tr.Steps[0].Attempt != 3 {
			t.Fatalf("want the charge completed on its third attempt: %+v", tr.Steps)
		}
		return tr
	}},
	{"PollingLoop", func(t *testing.T, h *harness, _ store.Store) transcript {
		run := h.start("poll", map[string]any{"until": 3, "intervalMs": 10})
		tr := h.transcript(h.await(run.ID, settle))
		wantTranscript(t, tr, store.StatusCompleted, "check-status", "backoff", "check-status#1", "backoff#1", "check-status#2")
		return tr
	}},
	{"QueryReadsState", queryReadsState},
	{"CrashAndReplayInTheMiddle", func(t *testing.T, h *harness, st store.Store) transcript {
		// The third step commit is lost as if the process died after the callback ran and
		// before its result was durable; the next activation replays the first two from the
		// journal and runs the third again.
		faulty := &faultyStore{Store: st, failAt: map[int32]bool{3: true}}
		eng, err := engine.New(engine.Config{Store: faulty, Runtime: runtimeForTests(t), LeaseFor: 3 * time.Second,
			PollInterval: time.Second, Logger: slog.New(slog.NewJSONHandler(h.logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer eng.Stop()
		run := h.start("steps", map[string]any{"n": 5})
		r := h.await(run.ID, settle)
		tr := h.transcript(r)
		wantTranscript(t, tr, store.StatusCompleted, "s", "s#1", "s#2", "s#3", "s#4")
		if r.Activations < 2 {
			t.Fatalf("%d activations: the lost commit did not force a replay", r.Activations)
		}
		return tr
	}},
}

// scenarioLangs names, for a scenario that not every language's fixture implements yet, the
// languages that run it; a scenario not named runs in every language.
var scenarioLangs = map[string][]string{}

func runsIn(scenario, lang string) bool {
	langs, ok := scenarioLangs[scenario]
	return !ok || slices.Contains(langs, lang)
}

// TestConformance runs every scenario against every language's fixture and requires each
// language's transcripts to equal the Go reference's.
func TestConformance(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string]map[string]transcript{} // scenario -> lang -> transcript
	t.Run("scenarios", func(t *testing.T) {
		for _, sc := range conformanceScenarios {
			for _, fx := range guestFixtures {
				if !runsIn(sc.name, fx.lang) {
					continue
				}
				t.Run(sc.name+"/"+fx.lang, func(t *testing.T) {
					t.Parallel()
					h := setup(t, harnessOptions{noStart: sc.name == "CrashAndReplayInTheMiddle" || sc.name == "ParallelCrashAndReplay"})
					h.deploy(fx.file, false)
					tr := sc.run(t, h, h.store)
					mu.Lock()
					defer mu.Unlock()
					if got[sc.name] == nil {
						got[sc.name] = map[string]transcript{}
					}
					got[sc.name][fx.lang] = tr
				})
			}
		}
	})
	if t.Failed() {
		return
	}
	for _, sc := range conformanceScenarios {
		ref := got[sc.name]["go"]
		for _, fx := range guestFixtures[1:] {
			if !runsIn(sc.name, fx.lang) {
				continue
			}
			if tr := got[sc.name][fx.lang]; !reflect.DeepEqual(tr, ref) {
				t.Errorf("%s: %s differs from go\n  go:   %+v\n  %s: %+v", sc.name, fx.lang, ref, fx.lang, tr)
			}
		}
	}
}

// transcript reads the finished run's outcome and journal.
func (h *harness) transcript(r store.Run) transcript {
	h.t.Helper()
	tr := transcript{Status: r.Status, Output: decodeAny(h.t, r.Output), Error: errorString(r.Error)}
	for _, s := range h.steps(r.ID) {
		tr.Steps = append(tr.Steps, stepRecord{Key: s.Key, Kind: s.Kind, Status: s.Status, Attempt: s.Attempt,
			Output: decodeAny(h.t, s.Output), Error: errorString(s.Error)})
	}
	return tr
}

func wantTranscript(t *testing.T, tr transcript, status store.RunStatus, keys ...string) {
	t.Helper()
	var got []string
	for _, s := range tr.Steps {
		got = append(got, s.Key)
	}
	if tr.Status != status || strings.Join(got, ",") != strings.Join(keys, ",") {
		t.Fatalf("run %s with keys %v, want %s with %v: %+v", tr.Status, got, status, keys, tr)
	}
}

// decodeAny decodes JSON so that two encodings of the same value (field order, spacing)
// compare equal.
func decodeAny(t testing.TB, raw json.RawMessage) any {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

func errorString(e *abi.ErrorInfo) string {
	if e == nil {
		return ""
	}
	return e.Code + ": " + e.Message
}
