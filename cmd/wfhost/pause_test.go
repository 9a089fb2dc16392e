package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/internal/testenv"
)

// TestRunsPauseAndResume: runs pause holds a saga in its hold; runs list --status paused and
// workflows list show it; runs resume lets it go on. workflows pause makes new runs paused
// until workflows resume; hostile arguments are refused with clear errors.
func TestRunsPauseAndResume(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
	expect(t, 0, "deploy", testdata("examples.wasm"))
	saga := runOf(t, expect(t, 0, "start", "order-saga", "--input", `{"orderId":"o-9","amount":2,"holdMs":1500}`, "--json"))
	testenv.Await(t, 30*time.Second, func() error {
		if got := runJSON[wire.Run](t, "runs", "get", "order-saga", saga.ID); got.Activations == 0 {
			return fmt.Errorf("the saga has not run yet")
		}
		return nil
	})
	matches(t, "runs pause", expect(t, 0, "runs", "pause", "order-saga", saga.ID).stdout, `status\s+(paused|running)`, `pause asked\s+\S+`)
	testenv.Await(t, 30*time.Second, func() error {
		if got := runJSON[wire.Run](t, "runs", "get", "order-saga", saga.ID); got.Status != wire.RunPaused {
			return fmt.Errorf("the saga is %s", got.Status)
		}
		return nil
	})
	matches(t, "runs list --status paused", expect(t, 0, "runs", "list", "--status", "paused").stdout, saga.ID+`\s+order-saga\s+\S+\s+paused`)
	matches(t, "runs resume", expect(t, 0, "runs", "resume", "order-saga", saga.ID).stdout, `status\s+running`)
	testenv.Await(t, 30*time.Second, func() error {
		if got := runJSON[wire.Run](t, "runs", "get", "order-saga", saga.ID); got.Status != wire.RunCompleted {
			return fmt.Errorf("the resumed saga is %s", got.Status)
		}
		return nil
	})
	expectJSONError(t, exitConflict, "conflict", 409, "runs", "pause", "order-saga", saga.ID)
	expectJSONError(t, exitConflict, "conflict", 409, "runs", "resume", "order-saga", saga.ID, "--version", "no-such-version")
	expectJSONError(t, exitNotFound, "not_found", 404, "runs", "pause", "order-saga", "00000000-0000-4000-8000-000000000000")
	expectJSONError(t, exitUsage, "usage", 0, "runs", "pause", "order-saga")

	matches(t, "workflows pause", expect(t, 0, "workflows", "pause", "order-saga").stdout, `order-saga paused: \d+ runs paused or pausing`)
	matches(t, "workflows list", expect(t, 0, "workflows", "list").stdout, `(?m)^order-saga\s.*\sall$`)
	held := runOf(t, expect(t, 0, "start", "order-saga", "--input", `{"orderId":"o-10","amount":2}`, "--json"))
	if held.Status != wire.RunPaused {
		t.Fatalf("a run of a paused workflow started %s, want paused", held.Status)
	}
	expectJSONError(t, exitConflict, "conflict", 409, "runs", "resume", "order-saga", held.ID)
	expectJSONError(t, exitNotFound, "not_found", 404, "workflows", "pause", "no-such-workflow")
	expectJSONError(t, exitOther, "invalid_request", 400, "workflows", "pause", "order-saga", "--version", "\xff")
	matches(t, "workflows resume", expect(t, 0, "workflows", "resume", "order-saga").stdout, `order-saga resumed: 1 runs resumed`)

	// A resume onto a version whose code parts from the run's journal is refused, saying where.
	charge := runOf(t, expect(t, 0, "start", "charge-or-pause", "--input", `{"failAttempts":5}`, "--json"))
	testenv.Await(t, 30*time.Second, func() error {
		if got := runJSON[wire.Run](t, "runs", "get", "charge-or-pause", charge.ID); got.Status != wire.RunPaused {
			return fmt.Errorf("the charge is %s", got.Status)
		}
		return nil
	})
	// --on-exhausted pause on a start: the saga's charge, whose policy says nothing, pauses the run
	// when its attempts run out; the run itself is not retried.
	saga2 := runOf(t, expect(t, 0, "start", "order-saga", "--input", `{"orderId":"o-11","amount":2,"failPayment":true}`, "--on-exhausted", "pause", "--json"))
	if saga2.Retry == nil || saga2.Retry.Attempts != 1 || saga2.Retry.OnExhausted != "pause" {
		t.Fatalf("the run's policy %+v, want 1 attempt and onExhausted pause", saga2.Retry)
	}
	testenv.Await(t, 30*time.Second, func() error {
		if got := runJSON[wire.Run](t, "runs", "get", "order-saga", saga2.ID); got.Status != wire.RunPaused {
			return fmt.Errorf("the saga is %s", got.Status)
		}
		return nil
	})
	expectJSONError(t, exitUsage, "usage", 0, "start", "order-saga", "--input", `{}`, "--on-exhausted", "retry")

	expect(t, 0, "deploy", testdata("examples_appended.wasm"), "--replace")
	refused := expectJSONError(t, exitConflict, "resume_refused", 409, "runs", "resume", "charge-or-pause", charge.ID, "--version", "2")
	matches(t, "a refused resume", refused.Error.Message, `diverged at journal entry 0`)
	testenv.Await(t, 30*time.Second, func() error {
		if got := runJSON[wire.Run](t, "runs", "get", "order-saga", held.ID); got.Status != wire.RunCompleted {
			return fmt.Errorf("the released run is %s", got.Status)
		}
		return nil
	})
}
