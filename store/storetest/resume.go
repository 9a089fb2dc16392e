package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

// Parked passes (engine/parking.go): a run suspended by a sleep right after a step
// (CommitAndSuspend), and resumed by id with the journal's tail (ResumeRun).
var resumeTests = []test{
	{"CommitAndSuspendThenResume", testCommitAndSuspendThenResume},
	{"CommitAndSuspendIsFenced", testCommitAndSuspendIsFenced},
	{"ResumeOnlyWhatAClaimCouldTake", testResumeOnlyWhatAClaimCouldTake},
	{"ResumeRespectsTheTenantCap", testResumeRespectsTheTenantCap},
}

// resumeParams resumes runID from entry seq for the fixture's owner.
func resumeParams(runID string, seq int) store.ResumeParams {
	return store.ResumeParams{RunID: runID, Owner: "test", LeaseFor: longLease, FromSeq: seq}
}

func testCommitAndSuspendThenResume(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	first := store.Step{RunID: r.ID, Seq: 0, Key: "s", Kind: store.KindRun, Status: store.StepCompleted, Attempt: 1,
		Output: json.RawMessage(`1`), StartedAt: f.now(), CompletedAt: ptr(f.now())}
	wake := f.now().Add(time.Millisecond)
	nap := store.Step{RunID: r.ID, Seq: 1, Key: "nap", Kind: store.KindSleep, Status: store.StepSleeping, WakeAt: &wake, StartedAt: f.now()}
	ok(t, f.s.CommitAndSuspend(f.ctx, c.Lease, first, nap, &wake))
	equalStep(t, f.step(r.ID, "s"), first)
	equalStep(t, f.step(r.ID, "nap"), nap)
	got := f.getRun(r.ID)
	equalTime(t, "available at", got.AvailableAt, &wake)

	f.pass(2 * time.Millisecond)
	rc, resumed, err := f.s.ResumeRun(f.ctx, resumeParams(r.ID, 1))
	ok(t, err)
	check(t, resumed, "a due suspended run was not resumed")
	check(t, rc.Lease.Epoch > c.Lease.Epoch, "the epoch did not grow: %d then %d", c.Lease.Epoch, rc.Lease.Epoch)
	equal(t, "activations", rc.Run.Activations, 2)
	equal(t, "tail length", len(rc.Journal), 1)
	// The due sleep the pass suspended at is marked elapsed by the resume, at its wake time.
	elapsed := nap
	elapsed.Status, elapsed.CompletedAt = store.StepCompleted, &wake
	equalStep(t, rc.Journal[0], elapsed)
	equalStep(t, f.step(r.ID, "nap"), elapsed)

	// The resumed lease holds the run like a claim's: no claim and no second resume take it,
	// and it is fenced like one.
	f.noClaim()
	_, again, err := f.s.ResumeRun(f.ctx, resumeParams(r.ID, 1))
	ok(t, err)
	check(t, !again, "a leased run was resumed twice")
	ok(t, f.s.CommitStep(f.ctx, rc.Lease, store.Step{RunID: r.ID, Seq: 2, Key: "s#1", Kind: store.KindRun,
		Status: store.StepCompleted, Attempt: 1, Output: json.RawMessage(`2`), StartedAt: f.now(), CompletedAt: ptr(f.now())}, longLease))
	wantErr(t, f.s.Release(f.ctx, c.Lease), store.ErrLeaseLost)
	ok(t, f.s.Release(f.ctx, rc.Lease))
	equal(t, "journal after the resumed commit", len(f.claim(r.ID, longLease).Journal), 3)
}

func testCommitAndSuspendIsFenced(t *testing.T, f *fixture) {
	r := f.run()
	stale := f.claim(r.ID, time.Millisecond)
	f.pass(5 * time.Millisecond)
	f.claim(r.ID, longLease) // the lease ran out and another host took the run
	wake := f.now().Add(time.Hour)
	held := store.Step{RunID: r.ID, Seq: 0, Key: "s", Kind: store.KindRun, Status: store.StepCompleted, Attempt: 1,
		Output: json.RawMessage(`1`), StartedAt: f.now(), CompletedAt: ptr(f.now())}
	nap := store.Step{RunID: r.ID, Seq: 1, Key: "nap", Kind: store.KindSleep, Status: store.StepSleeping, WakeAt: &wake, StartedAt: f.now()}
	wantErr(t, f.s.CommitAndSuspend(f.ctx, stale.Lease, held, nap, &wake), store.ErrLeaseLost)
	equal(t, "rows written under a stale lease", len(f.steps(r.ID)), 0)
}

func testResumeOnlyWhatAClaimCouldTake(t *testing.T, f *fixture) {
	notResumed := func(what, runID string) {
		t.Helper()
		_, resumed, err := f.s.ResumeRun(f.ctx, resumeParams(runID, 0))
		ok(t, err)
		check(t, !resumed, "%s was resumed", what)
	}
	// Not due yet.
	later := f.run()
	c := f.claim(later.ID, longLease)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, ptr(f.now().Add(time.Hour))))
	notResumed("a run due in an hour", later.ID)
	// Waiting for an event only.
	waiter := f.run()
	c = f.claim(waiter.ID, longLease)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, nil))
	notResumed("a run waiting for an event", waiter.ID)
	// Held under a live lease.
	held := f.run()
	f.claim(held.ID, longLease)
	notResumed("a leased run", held.ID)
	// Cancelled, ended, unknown, malformed.
	cancelled := f.run()
	_, err := f.s.CancelRun(f.ctx, f.tenant, cancelled.ID)
	ok(t, err)
	notResumed("a cancelled run", cancelled.ID)
	notResumed("an unknown run", "00000000-0000-4000-8000-000000000000")
	notResumed("a malformed id", "not-a-run\x00")
	// Nothing above was changed by the refusals: the due run is resumed, its tail empty.
	due := f.run()
	c = f.claim(due.ID, longLease)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, ptr(f.now().Add(-time.Millisecond))))
	rc, resumed, err := f.s.ResumeRun(f.ctx, resumeParams(due.ID, 0))
	ok(t, err)
	check(t, resumed && len(rc.Journal) == 0, "a due run: resumed %v with %d entries", resumed, len(rc.Journal))
	equal(t, "status of the run due in an hour", f.getRun(later.ID).AvailableAt.After(f.now()), true)
}

func testResumeRespectsTheTenantCap(t *testing.T, f *fixture) {
	_, err := f.s.SetTenantLimits(f.ctx, f.tenant, store.Limits{Concurrency: 1})
	ok(t, err)
	parked := f.run()
	c := f.claim(parked.ID, longLease)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, ptr(f.now().Add(50*time.Millisecond))))
	busy := f.run()
	busyClaim := f.claim(busy.ID, longLease) // the tenant's one slot
	f.pass(60 * time.Millisecond)            // the parked run is due now
	_, resumed, err := f.s.ResumeRun(f.ctx, resumeParams(parked.ID, 0))
	ok(t, err)
	check(t, !resumed, "a run was resumed past its tenant's cap of 1")
	ok(t, f.s.Finish(f.ctx, busyClaim.Lease, store.StatusCompleted, json.RawMessage(`null`), nil, nil))
	_, resumed, err = f.s.ResumeRun(f.ctx, resumeParams(parked.ID, 0))
	ok(t, err)
	check(t, resumed, "a run was not resumed with its tenant's slot free")
}
