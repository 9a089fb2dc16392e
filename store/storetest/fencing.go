package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var fencingTests = []test{
	{"StaleEpochWritesNothing", testStaleEpochWritesNothing},
	{"StaleEpochOnWaits", testStaleEpochOnWaits},
	{"EndedRunFencesEveryWrite", testEndedRunFencesEveryWrite},
}

// fencedWrites tries every fenced method with lease l and requires each to fail with
// ErrLeaseLost. key names a step the writes target.
func fencedWrites(t *testing.T, f *fixture, l store.Lease, key string) {
	t.Helper()
	step := store.Step{RunID: l.RunID, Seq: 0, Key: key, Kind: store.KindRun, Status: store.StepFailed, Attempt: 9,
		Error: &abi.ErrorInfo{Message: "stale"}, StartedAt: f.now(), CompletedAt: ptr(f.now())}
	fresh := step
	fresh.Seq, fresh.Key = 7, "stale-new"
	wake := f.now().Add(time.Hour)
	wantErr(t, f.s.CommitStep(f.ctx, l, step, longLease), store.ErrLeaseLost)
	wantErr(t, f.s.CommitStep(f.ctx, l, fresh, longLease), store.ErrLeaseLost)
	wantErr(t, f.s.Suspend(f.ctx, l, nil, &wake), store.ErrLeaseLost)
	wantErr(t, f.s.Suspend(f.ctx, l, &fresh, &wake), store.ErrLeaseLost)
	wantErr(t, f.s.Finish(f.ctx, l, store.StatusCompleted, json.RawMessage(`"stale"`), nil, nil), store.ErrLeaseLost)
	wantErr(t, f.s.Finish(f.ctx, l, store.StatusFailed, nil, &abi.ErrorInfo{Message: "stale"}, nil), store.ErrLeaseLost)
	wantErr(t, f.s.Release(f.ctx, l), store.ErrLeaseLost)
	wantErr(t, f.s.Fault(f.ctx, l, "stale", wake), store.ErrLeaseLost)
	resolved, err := f.s.ReachWait(f.ctx, l, f.waitStep(l.RunID, 8, "stale-wait", "go", "", nil), longLease)
	wantErr(t, err, store.ErrLeaseLost)
	check(t, resolved == nil, "a fenced ReachWait returned a step")
	_, err = f.s.ParkWait(f.ctx, l, key, &wake, longLease)
	wantErr(t, err, store.ErrLeaseLost)
	_, err = f.s.TimeoutWait(f.ctx, l, key, f.now(), longLease)
	wantErr(t, err, store.ErrLeaseLost)
	wantErr(t, f.s.SaveSnapshot(f.ctx, l, &fresh, store.Snapshot{RunID: l.RunID, Seq: 8, LastKey: fresh.Key, Code: "c", Data: []byte("stale")}, longLease), store.ErrLeaseLost)
	wantErr(t, f.s.SaveSnapshot(f.ctx, l, nil, store.Snapshot{RunID: l.RunID, Seq: 1, LastKey: key, Code: "c", Data: []byte("stale")}, longLease), store.ErrLeaseLost)
	page, more, err := f.s.JournalPage(f.ctx, l, 0, 100)
	wantErr(t, err, store.ErrLeaseLost)
	check(t, page == nil && !more, "a fenced JournalPage returned %d entries, more %v", len(page), more)
	held, err := f.s.ExtendLeases(f.ctx, []store.Lease{l}, longLease)
	ok(t, err)
	equal(t, "stale leases extended", len(held), 0)
}

func testStaleEpochWritesNothing(t *testing.T, f *fixture) {
	r := f.run()
	_, err := f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: r.ID, Event: "go", Payload: json.RawMessage(`{"n":1}`), MaxBuffered: 10})
	ok(t, err)
	old := f.claim(r.ID, 20*time.Millisecond)
	first := store.Step{RunID: r.ID, Seq: 0, Key: "a", Kind: store.KindRun, Status: store.StepCompleted, Attempt: 1,
		Output: json.RawMessage(`1`), StartedAt: f.now(), CompletedAt: ptr(f.now())}
	ok(t, f.s.CommitStep(f.ctx, old.Lease, first, 20*time.Millisecond))
	f.pass(60 * time.Millisecond)
	cur := f.claim(r.ID, longLease)
	before := f.getRun(r.ID)

	fencedWrites(t, f, old.Lease, "a")

	steps := f.steps(r.ID)
	equal(t, "journal rows after stale writes", len(steps), 1)
	equalStep(t, steps[0], first)
	after := f.getRun(r.ID)
	equal(t, "status after stale writes", after.Status, store.StatusRunning)
	equalTime(t, "available at after stale writes", after.AvailableAt, before.AvailableAt)
	check(t, after.Output == nil && after.Error == nil, "stale writes left a result: %+v", after)
	f.noClaim() // the current lease still holds

	// The current holder is unaffected, and the buffered event was not consumed by the stale wait.
	got, err := f.s.ReachWait(f.ctx, cur.Lease, f.waitStep(r.ID, 1, "w", "go", "", nil), longLease)
	ok(t, err)
	check(t, got != nil, "the buffered event was lost to a fenced ReachWait")
	equalJSON(t, "event payload", got.Output, `{"n":1}`)
	ok(t, f.s.Finish(f.ctx, cur.Lease, store.StatusCompleted, json.RawMessage(`2`), nil, nil))
}

func testStaleEpochOnWaits(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	timeout := f.now().Add(-time.Millisecond) // already due, so the run is claimable at once
	parked, err := f.s.ReachWait(f.ctx, c.Lease, f.waitStep(r.ID, 0, "w", "never", "", &timeout), longLease)
	ok(t, err)
	check(t, parked == nil, "a wait with no event resolved")
	mid := f.claim(r.ID, 20*time.Millisecond)
	f.pass(60 * time.Millisecond)
	cur := f.claim(r.ID, longLease)

	fencedWrites(t, f, mid.Lease, "w")
	equal(t, "stale timeout", f.step(r.ID, "w").Status, store.StepWaiting)
	_, err = f.s.ParkWait(f.ctx, c.Lease, "w", nil, longLease)
	wantErr(t, err, store.ErrLeaseLost)
	equal(t, "stale park", f.getRun(r.ID).AvailableAt != nil, true)

	got, err := f.s.TimeoutWait(f.ctx, cur.Lease, "w", timeout, longLease)
	ok(t, err)
	equal(t, "current timeout", got.Status, store.StepTimedOut)
}

func testEndedRunFencesEveryWrite(t *testing.T, f *fixture) {
	cancelled := f.run()
	c := f.claim(cancelled.ID, longLease)
	_, err := f.s.CancelRun(f.ctx, f.tenant, cancelled.ID)
	ok(t, err)
	fencedWrites(t, f, c.Lease, "a")
	equal(t, "journal of a cancelled run", len(f.steps(cancelled.ID)), 0)
	equal(t, "status of a cancelled run", f.getRun(cancelled.ID).Status, store.StatusCancelled)

	completed := f.run()
	c = f.claim(completed.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`"done"`), nil, nil))
	fencedWrites(t, f, c.Lease, "a")
	r := f.getRun(completed.ID)
	equal(t, "status of a completed run", r.Status, store.StatusCompleted)
	equalJSON(t, "output of a completed run", r.Output, `"done"`)

	stuck := f.run()
	c = f.claim(stuck.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusNondeterministic, nil, &abi.ErrorInfo{Code: abi.CodeNondeterministic, Message: "x"}, nil))
	fencedWrites(t, f, c.Lease, "a")
	equal(t, "status of a nondeterministic run", f.getRun(stuck.ID).Status, store.StatusNondeterministic)
	f.noClaim()
}
