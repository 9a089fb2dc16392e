package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// finishFailsOnce refuses the first write of a run's end with its last step keyed key as if
// the lease had been lost: the pass drops the step's result, and the activation that takes
// the run once the lease has run out runs the step's callback again.
type finishFailsOnce struct {
	store.Store
	key    string
	failed atomic.Bool
}

func (f *finishFailsOnce) CommitAndFinish(ctx context.Context, l store.Lease, s store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) error {
	if s.Key == f.key && f.failed.CompareAndSwap(false, true) {
		return store.ErrLeaseLost
	}
	return f.Store.CommitAndFinish(ctx, l, s, status, output, info, guestLog)
}

// TestAnEventAStepSendsLandsOnce: a step that sends an event and runs again (its result was
// lost with its lease) sends it again as a duplicate: the target took it once, and the
// second attempt is told so (ABI.md §4.13).
func TestAnEventAStepSendsLandsOnce(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{wrapStore: func(s store.Store) store.Store { return &finishFailsOnce{Store: s, key: "notify"} }})
	h.deploy("examples.wasm", false)
	target := h.start("onboarding", map[string]any{"email": "once@example.com", "delayMs": 1, "verifyTimeoutMs": 600000})
	h.awaitStep(target.ID, "await-verify", store.StepWaiting, settle)
	relay := h.start("relay", map[string]any{"runId": target.ID, "event": "verify",
		"payload": map[string]any{"userId": h.userID(target.ID), "via": "relay"}})
	r := h.await(relay.ID, settle)
	if r.Status != store.StatusCompleted || decode[map[string]any](t, r.Output)["duplicate"] != true {
		t.Fatalf("relay: %s %s %+v, want completed, its second sending a duplicate", r.Status, r.Output, r.Error)
	}
	if n := strings.Count(h.logs.String(), "step sent an event"); n != 2 {
		t.Fatalf("the step sent %d times, want 2 (once, then its duplicate)", n)
	}
	if done := h.await(target.ID, settle); done.Status != store.StatusCompleted {
		t.Fatalf("the target: %s %+v", done.Status, done.Error)
	}
}

// TestAStepBroadcasts: a step's broadcast resolves the tenant's runs waiting on the event.
func TestAStepBroadcasts(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	target := h.start("onboarding", map[string]any{"email": "cast@example.com", "delayMs": 1, "verifyTimeoutMs": 600000})
	h.awaitStep(target.ID, "await-verify", store.StepWaiting, settle)
	relay := h.start("relay", map[string]any{"broadcast": true, "event": "verify",
		"payload": map[string]any{"userId": h.userID(target.ID), "via": "broadcast"}})
	if r := h.await(relay.ID, settle); r.Status != store.StatusCompleted || decode[map[string]any](t, r.Output)["resolved"] != float64(1) {
		t.Fatalf("relay: %s %s %+v, want one waiting run resolved", r.Status, r.Output, r.Error)
	}
	if done := h.await(target.ID, settle); done.Status != store.StatusCompleted || !strings.Contains(string(done.Output), "verified via broadcast") {
		t.Fatalf("the target: %s %s", done.Status, done.Output)
	}
}
