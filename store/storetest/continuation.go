package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var continuationTests = []test{
	{"HandsOnTheKeyAndTheEvents", testContinueHandsOn},
	{"RetryWaitsItsBackoff", testContinueRetryWaits},
	{"Fenced", testContinueFenced},
}

// next is the run that continues r, as the engine builds it.
func (f *fixture) next(r store.Run, input string, attempt int) store.NewRun {
	return store.NewRun{TenantID: r.TenantID, Workflow: r.Workflow, Version: r.Version, Digest: r.Digest,
		Input: json.RawMessage(input), RetentionDays: r.RetentionDays, Deadline: r.Deadline, Retry: r.Retry, Attempt: attempt}
}

// A run that continues as new ends continued, with its last step, and the new run is created
// pending and claimable now, linked both ways; the ended run's key moves to it, and so does an
// event signalled to the ended run that no wait took.
func testContinueHandsOn(t *testing.T, f *fixture) {
	deadline := f.now().Add(time.Hour)
	r, _, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
		Input: json.RawMessage(`{"turn":0}`), IdempotencyKey: "loop-1", RetentionDays: 7, Deadline: &deadline,
		Retry: &abi.RetryPolicy{Attempts: 3, Backoff: abi.BackoffFixed, BaseMs: 10}})
	ok(t, err)
	c := f.claim(r.ID, longLease)
	check(t, !f.sendSignal(r.ID), "a signal to a run waiting for nothing was delivered")
	next, err := f.s.FinishAndContinue(f.ctx, c.Lease, ptr(f.runStep(r.ID, 0, "tick")), store.StatusContinued, nil, nil, f.next(c.Run, `{"turn":1}`, 1), nil)

	ok(t, err)
	ended := f.getRun(r.ID)
	equal(t, "the ended run's status", ended.Status, store.StatusContinued)
	equal(t, "the ended run's link", ended.ContinuedAs, next.ID)
	equal(t, "the ended run's key", ended.IdempotencyKey, "")
	check(t, ended.CompletedAt != nil, "the ended run has no completion time")
	equal(t, "the ended run's last step", len(f.steps(r.ID)), 1)

	equal(t, "the new run's status", next.Status, store.StatusPending)
	equal(t, "the new run's link", next.ContinuedFrom, r.ID)
	equal(t, "the new run's key", next.IdempotencyKey, "loop-1")
	equalJSON(t, "the new run's input", next.Input, `{"turn":1}`)
	equal(t, "the new run's attempt", next.Attempt, 1)
	check(t, next.Retry != nil && next.Retry.Attempts == 3, "the new run's retry policy: %+v", next.Retry)
	check(t, next.Deadline != nil && next.Deadline.Equal(deadline), "the new run's deadline %v, want %v", next.Deadline, deadline)
	equal(t, "the new run's journal", len(f.steps(next.ID)), 0)
	equal(t, "the new run as read", f.getRun(next.ID).ContinuedFrom, r.ID)

	// The key names the new run; a start with it finds that run.
	again, created, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
		Input: json.RawMessage(`{}`), IdempotencyKey: "loop-1", RetentionDays: 7})
	ok(t, err)
	check(t, !created && again.ID == next.ID, "a start with the key: created %v, run %s, want the new run %s", created, again.ID, next.ID)

	// The signal kept for the ended run is the new run's now: its wait takes it.
	c2 := f.claim(next.ID, longLease)
	got := reach(t, f, c2.Lease, f.waitStep(next.ID, 0, "w", "ping", "", nil))
	check(t, got != nil, "the new run's wait did not find the event kept for the ended run")
	_, err = f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: r.ID, Event: "ping", Payload: json.RawMessage(`{}`), MaxBuffered: 10})
	check(t, errors.Is(err, store.ErrConflict), "a signal to the continued run: %v, want ErrConflict", err)
}

// A retry (a failed run's successor) is claimable only once its backoff has passed; the failed
// run keeps its error.
func testContinueRetryWaits(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	info := &abi.ErrorInfo{Code: "card_declined", Message: "no"}
	n := f.next(c.Run, `{"n":1}`, 2)
	at := f.now().Add(time.Hour)
	n.NotBefore = &at
	next, err := f.s.FinishAndContinue(f.ctx, c.Lease, nil, store.StatusFailed, nil, info, n, nil)
	ok(t, err)
	ended := f.getRun(r.ID)
	equal(t, "the failed run's status", ended.Status, store.StatusFailed)
	check(t, ended.Error != nil && ended.Error.Code == info.Code && ended.Error.Message == info.Message, "the failed run's error: %+v", ended.Error)
	equal(t, "the failed run's link", ended.ContinuedAs, next.ID)
	equal(t, "the retry's attempt", next.Attempt, 2)
	check(t, next.AvailableAt != nil && next.AvailableAt.Equal(at), "the retry is available at %v, want %v", next.AvailableAt, at)
	f.noClaim()
}

// FinishAndContinue is fenced: under a lost lease nothing is written and no run is created.
func testContinueFenced(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	stale := c.Lease
	stale.Epoch--
	_, err := f.s.FinishAndContinue(f.ctx, stale, nil, store.StatusContinued, nil, nil, f.next(c.Run, `{}`, 1), nil)
	check(t, errors.Is(err, store.ErrLeaseLost), "a stale lease: %v, want ErrLeaseLost", err)
	equal(t, "status", f.getRun(r.ID).Status, store.StatusRunning)
	equal(t, "continued as", f.getRun(r.ID).ContinuedAs, "")
	runs, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{})
	ok(t, err)
	equal(t, "runs", len(runs), 1)
}
