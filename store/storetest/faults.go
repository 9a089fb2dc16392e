package storetest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// Faults: what a store tells the engine so that no run is re-activated forever. The stores
// count and classify the same way; the engine decides what to do (engine.Config.FaultLimit).
var faultTests = []test{
	{"FaultsCountUntilProgress", testFaultsCountUntilProgress},
	{"ExpiredLeaseIsAFault", testExpiredLeaseIsAFault},
	{"EveryJournalWriteIsProgress", testEveryJournalWriteIsProgress},
	{"RefusedValuesWriteNothing", testRefusedValuesWriteNothing},
	{"ReleaseOwned", testReleaseOwned},
}

// testReleaseOwned: a host hands back the leases it holds but does not know of (a claim whose
// answer was lost), keeping the ones it runs; other hosts' leases are left alone, and no fault
// is counted.
func testReleaseOwned(t *testing.T, f *fixture) {
	for range 3 {
		f.run()
	}
	mine, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "me", Limit: 2, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claimed", len(mine), 2)
	theirs, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "them", Limit: 1, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claimed by the other host", len(theirs), 1)
	kept, lost := mine[0], mine[1]

	n, err := f.s.ReleaseOwned(f.ctx, "me", []string{kept.Run.ID})
	ok(t, err)
	equal(t, "released", n, 1)
	c := f.claim(lost.Run.ID, longLease) // the only claimable run: "them" still holds theirs
	equal(t, "faults of a released run", c.Faults, 0)
	// The kept lease still fences as before.
	ok(t, f.s.CommitStep(f.ctx, kept.Lease, f.runStep(kept.Run.ID, 0, "a"), longLease))

	n, err = f.s.ReleaseOwned(f.ctx, "nobody", nil)
	ok(t, err)
	equal(t, "released for a host holding nothing", n, 0)
	f.noClaim()
}

// runStep is a completed run step at seq, as an activation commits it.
func (f *fixture) runStep(runID string, seq int, key string) store.Step {
	return store.Step{RunID: runID, Seq: seq, Key: key, Kind: store.KindRun, Status: store.StepCompleted,
		Output: json.RawMessage(`1`), Attempt: 1, StartedAt: f.now(), CompletedAt: ptr(f.now())}
}

// testFaultsCountUntilProgress: Fault hands the run back at retryAt and counts the fault with
// its reason; a release (a graceful shutdown) and a suspension without a step neither count
// nor reset; a step commit resets the count.
func testFaultsCountUntilProgress(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	equal(t, "faults of a new run", c.Faults, 0)
	equal(t, "last fault of a new run", c.LastFault, "")

	later := f.now().Add(time.Hour)
	ok(t, f.s.Fault(f.ctx, c.Lease, "store unreachable: first", later))
	got := f.getRun(r.ID)
	equal(t, "status after a fault", got.Status, store.StatusRunning)
	equalTime(t, "available at after a fault", got.AvailableAt, &later)
	f.noClaim() // not before retryAt

	// Make it runnable now, as the fault's retry time passing would.
	c = f.claimAfter(r.ID, func(l store.Lease) { ok(t, f.s.Fault(f.ctx, l, "store unreachable: second", f.now())) }, c.Lease)
	equal(t, "faults after two", c.Faults, 2)
	equal(t, "last fault", c.LastFault, "store unreachable: second")

	// A graceful release and a suspension without a step are no faults and no progress.
	c = f.claimAfter(r.ID, func(l store.Lease) { ok(t, f.s.Release(f.ctx, l)) }, c.Lease)
	equal(t, "faults after a release", c.Faults, 2)
	c = f.claimAfter(r.ID, func(l store.Lease) { ok(t, f.s.Suspend(f.ctx, l, nil, ptr(f.now()))) }, c.Lease)
	equal(t, "faults after a suspension without a step", c.Faults, 2)

	ok(t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(r.ID, 0, "a"), longLease))
	c = f.claimAfter(r.ID, func(l store.Lease) { ok(t, f.s.Fault(f.ctx, l, "third", f.now())) }, c.Lease)
	equal(t, "faults after progress and one more fault", c.Faults, 1)
	equal(t, "last fault after progress", c.LastFault, "third")
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
}

// claimAfter ends the activation holding l with end, then claims the run again.
func (f *fixture) claimAfter(runID string, end func(store.Lease), l store.Lease) store.Claim {
	f.t.Helper()
	end(l)
	return f.claim(runID, longLease)
}

// testExpiredLeaseIsAFault: a lease that runs out without a hand-back (its host died or hung)
// counts as a fault when the run is claimed again, naming the host; a run started leased
// (CreateLeasedRun) counts the same.
func testExpiredLeaseIsAFault(t *testing.T, f *fixture) {
	r := f.run()
	f.claim(r.ID, 20*time.Millisecond)
	f.pass(60 * time.Millisecond)
	c := f.claim(r.ID, 20*time.Millisecond)
	equal(t, "faults after a lease ran out", c.Faults, 1)
	check(t, strings.Contains(c.LastFault, "test"), "the last fault does not name the host: %q", c.LastFault)
	f.pass(60 * time.Millisecond)
	c = f.claim(r.ID, longLease)
	equal(t, "faults after two leases ran out", c.Faults, 2)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))

	lc, _ := f.leased("", store.LeaseTo{LeaseFor: 20 * time.Millisecond})
	equal(t, "faults of a run started leased", lc.Faults, 0)
	f.pass(60 * time.Millisecond)
	c = f.claim(lc.Run.ID, longLease)
	equal(t, "faults after the starting host's lease ran out", c.Faults, 1)
	check(t, strings.Contains(c.LastFault, "here"), "the last fault does not name the host: %q", c.LastFault)
}

// testEveryJournalWriteIsProgress: each way an activation writes its journal (a step commit, a
// suspension with its step, a wait reached, a wait timed out) clears the fault count.
func testEveryJournalWriteIsProgress(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	fault := func() store.Claim {
		t.Helper()
		return f.claimAfter(r.ID, func(l store.Lease) { ok(t, f.s.Fault(f.ctx, l, "fault", f.now())) }, c.Lease)
	}
	c = fault()
	equal(t, "faults", c.Faults, 1)

	// A suspension with its step (a sleep, a retry) is progress.
	sleep := store.Step{RunID: r.ID, Seq: 0, Key: "nap", Kind: store.KindSleep, Status: store.StepSleeping,
		StartedAt: f.now(), WakeAt: ptr(f.now())}
	c = f.claimAfter(r.ID, func(l store.Lease) { ok(t, f.s.Suspend(f.ctx, l, &sleep, ptr(f.now()))) }, c.Lease)
	equal(t, "faults after a suspension with its step", c.Faults, 0)

	c = fault()
	// A wait reached is progress, whether it waits or is resolved at once.
	resolved, err := f.s.ReachWait(f.ctx, c.Lease, f.waitStep(r.ID, 1, "w", "go", "", ptr(f.now())), longLease)
	ok(t, err)
	check(t, resolved == nil, "a wait with no event was resolved")
	c = f.claim(r.ID, longLease)
	equal(t, "faults after a wait was reached", c.Faults, 0)

	c = fault()
	// A wait an event resolved is progress, once the activation sees it (ParkWait finds it).
	_, err = f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: r.ID, Event: "go", Payload: json.RawMessage(`{}`), MaxBuffered: 10})
	ok(t, err)
	row, err := f.s.ParkWait(f.ctx, c.Lease, "w", nil, longLease)
	ok(t, err)
	check(t, row != nil && row.Status == store.StepCompleted, "the signalled wait is not resolved: %+v", row)
	c = fault()
	equal(t, "faults after a resolved wait and one more fault", c.Faults, 1)
	// A wait timed out is progress.
	ok(t, f.s.Suspend(f.ctx, c.Lease, &store.Step{RunID: r.ID, Seq: 2, Key: "w2", Kind: store.KindWait, Status: store.StepWaiting,
		Event: "never", StartedAt: f.now(), WakeAt: ptr(f.now())}, ptr(f.now())))
	c = f.claim(r.ID, longLease)
	c = fault()
	_, err = f.s.TimeoutWait(f.ctx, c.Lease, "w2", f.now(), longLease)
	ok(t, err)
	c = fault()
	equal(t, "faults after a wait timed out and one more fault", c.Faults, 1)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
}

// testRefusedValuesWriteNothing: a value the store cannot keep (here JSON with \u0000, which
// Postgres's jsonb refuses and abi.CheckJSON forbids) is ErrRefused, never ErrUnavailable: the
// engine must fail the run, not try again. Nothing of the refused write is kept and the lease
// still holds, so the activation can record the run's failure.
func testRefusedValuesWriteNothing(t *testing.T, f *fixture) {
	nul := json.RawMessage(`{"s":"a\u0000b"}`)
	_, _, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
		Input: nul, RetentionDays: 7})
	wantErr(t, err, store.ErrRefused)

	r := f.run()
	c := f.claim(r.ID, longLease)
	bad := f.runStep(r.ID, 0, "a")
	bad.Output = nul
	err = f.s.CommitStep(f.ctx, c.Lease, bad, longLease)
	wantErr(t, err, store.ErrRefused)
	check(t, !errors.Is(err, store.ErrUnavailable), "a refused value is also reported unavailable: %v", err)
	err = f.s.Suspend(f.ctx, c.Lease, &bad, ptr(f.now().Add(time.Hour)))
	wantErr(t, err, store.ErrRefused)
	err = f.s.CommitAndFinish(f.ctx, c.Lease, bad, store.StatusCompleted, json.RawMessage(`1`), nil, nil)
	wantErr(t, err, store.ErrRefused)
	err = f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, nul, nil, nil)
	wantErr(t, err, store.ErrRefused)
	equal(t, "journal after refused writes", len(f.steps(r.ID)), 0)
	got := f.getRun(r.ID)
	equal(t, "status after refused writes", got.Status, store.StatusRunning)
	check(t, got.AvailableAt != nil && got.AvailableAt.After(f.now().Add(time.Minute)), "a refused suspension released the run")

	// The activation still holds the run and records why it failed.
	info := &abi.ErrorInfo{Code: abi.CodeStoreRefused, Message: "the store refused the step's output"}
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusFailed, nil, info, nil))
	got = f.getRun(r.ID)
	equal(t, "status", got.Status, store.StatusFailed)
	check(t, got.Error != nil && got.Error.Code == abi.CodeStoreRefused, "error %+v", got.Error)
}
