package storetest

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var claimTests = []test{
	{"ClaimAndRelease", testClaimAndRelease},
	{"ClaimLimit", testClaimLimit},
	{"ExpiredLeaseIsClaimable", testExpiredLeaseIsClaimable},
	{"CommitStepRenewsLease", testCommitStepRenewsLease},
	{"ExtendLeases", testExtendLeases},
	{"ExtendLeasesAfterSuspend", testExtendLeasesAfterSuspend},
	{"ConcurrentClaimers", testConcurrentClaimers},
	{"ClaimIsFairAcrossTenants", testClaimIsFairAcrossTenants},
	{"OneSlotGoesToTheTenantWithFewerInFlight", testOneSlotGoesToTheTenantWithFewerInFlight},
	{"JournalRoundTrip", testJournalRoundTrip},
	{"CommitStepUpdatesInPlace", testCommitStepUpdatesInPlace},
	{"SuspendAndNextWakeup", testSuspendAndNextWakeup},
	{"Finish", testFinish},
	{"CommitAndFinish", testCommitAndFinish},
}

func testClaimAndRelease(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	equal(t, "claimed status", c.Run.Status, store.StatusRunning)
	equal(t, "activations", c.Run.Activations, 1)
	equal(t, "lease run", c.Lease.RunID, r.ID)
	check(t, c.Run.StartedAt != nil, "a claimed run has no start time")
	equal(t, "journal of a new run", len(c.Journal), 0)
	equalJSON(t, "claimed input", c.Run.Input, `{"n":1}`)
	equal(t, "stored status", f.getRun(r.ID).Status, store.StatusRunning)

	// A held lease keeps the run from every other claimer.
	f.noClaim()

	ok(t, f.s.Release(f.ctx, c.Lease))
	got := f.getRun(r.ID)
	equal(t, "status after release", got.Status, store.StatusRunning)
	check(t, got.AvailableAt != nil, "a released run is not available")
	c2 := f.claim(r.ID, longLease)
	check(t, c2.Lease.Epoch > c.Lease.Epoch, "the epoch did not grow: %d then %d", c.Lease.Epoch, c2.Lease.Epoch)
	equal(t, "activations after a second claim", c2.Run.Activations, 2)
	equalTime(t, "started at is the first claim", c2.Run.StartedAt, c.Run.StartedAt)
}

func testClaimLimit(t *testing.T, f *fixture) {
	for range 5 {
		f.run()
	}
	none, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 0, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claims with limit 0", len(none), 0)
	two, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 2, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claims with limit 2", len(two), 2)
	rest, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	equal(t, "the remaining claims", len(rest), 3)
	f.noClaim()
}

func testExpiredLeaseIsClaimable(t *testing.T, f *fixture) {
	r := f.run()
	c1 := f.claim(r.ID, 20*time.Millisecond)
	f.pass(60 * time.Millisecond)
	c2 := f.claim(r.ID, longLease)
	check(t, c2.Lease.Epoch > c1.Lease.Epoch, "reclaiming an expired lease kept epoch %d (was %d)", c2.Lease.Epoch, c1.Lease.Epoch)
	equal(t, "activations", c2.Run.Activations, 2)
	// The first holder is fenced out even though nobody told it.
	wantErr(t, f.s.Release(f.ctx, c1.Lease), store.ErrLeaseLost)
}

func testCommitStepRenewsLease(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, 200*time.Millisecond)
	ok(t, f.s.CommitStep(f.ctx, c.Lease, store.Step{RunID: r.ID, Key: "a", Kind: store.KindRun,
		Status: store.StepCompleted, Attempt: 1, StartedAt: f.now(), CompletedAt: ptr(f.now())}, longLease))
	f.pass(300 * time.Millisecond)
	f.noClaim()
}

// A heartbeat whose list was taken before the run suspended must not renew the lease the
// suspension handed back: the sleeping run would carry a lease nobody holds, and no claim
// would take it, once due or signalled, until that ran out (issue 13).
func testExtendLeasesAfterSuspend(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	wake := f.now().Add(50 * time.Millisecond)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, &wake))
	held, err := f.s.ExtendLeases(f.ctx, []store.Lease{c.Lease}, longLease)
	ok(t, err)
	equal(t, "leases held after the suspension", len(held), 0)
	f.pass(100 * time.Millisecond)
	f.claim(r.ID, longLease)
}

func testExtendLeases(t *testing.T, f *fixture) {
	a, b, gone := f.run(), f.run(), f.run()
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: 200 * time.Millisecond})
	ok(t, err)
	equal(t, "claims", len(claims), 3)
	leases := map[string]store.Lease{}
	for _, c := range claims {
		leases[c.Run.ID] = c.Lease
	}
	_, err = f.s.CancelRun(f.ctx, f.tenant, gone.ID)
	ok(t, err)
	stale := leases[b.ID]
	stale.Epoch++

	held, err := f.s.ExtendLeases(f.ctx, []store.Lease{leases[a.ID], stale, leases[gone.ID]}, longLease)
	ok(t, err)
	check(t, slices.Equal(held, []store.Lease{leases[a.ID]}), "held leases: got %v, want only %v", held, leases[a.ID])

	held, err = f.s.ExtendLeases(f.ctx, nil, longLease)
	ok(t, err)
	equal(t, "held of none", len(held), 0)

	// a was extended; b was not and expires.
	f.pass(300 * time.Millisecond)
	f.claim(b.ID, longLease)
}

func testConcurrentClaimers(t *testing.T, f *fixture) {
	const (
		runs     = 200
		claimers = 8
	)
	var wg sync.WaitGroup
	for range claimers {
		wg.Go(func() {
			for range runs / claimers {
				_, _, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1",
					Digest: f.digest, Input: json.RawMessage(`{}`)})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	var (
		mu      sync.Mutex
		claimed = map[string]int{}
		epochs  = map[string]int64{}
	)
	for range claimers {
		wg.Go(func() {
			for {
				claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "claimer", Limit: 7, LeaseFor: longLease})
				if err != nil {
					t.Error(err)
					return
				}
				if len(claims) == 0 {
					return
				}
				mu.Lock()
				for _, c := range claims {
					claimed[c.Run.ID]++
					epochs[c.Run.ID] = c.Lease.Epoch
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	equal(t, "distinct runs claimed", len(claimed), runs)
	for id, n := range claimed {
		equal(t, "claims of run "+id, n, 1)
	}
	f.noClaim()
}

func testJournalRoundTrip(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	t0 := f.now().Add(-time.Minute)
	wake := t0.Add(time.Hour)
	want := []store.Step{
		{RunID: r.ID, Seq: 0, Key: "fetch", Kind: store.KindRun, Status: store.StepCompleted,
			Output: json.RawMessage(`{"x":1,"list":[1,"two",null]}`), Attempt: 1, StartedAt: t0, CompletedAt: ptr(t0.Add(time.Millisecond))},
		{RunID: r.ID, Seq: 1, Key: "charge", Kind: store.KindRun, Status: store.StepFailed, Attempt: 3, StartedAt: t0.Add(time.Second),
			Error:       &abi.ErrorInfo{Code: "card_declined", Message: "no", NonRetryable: true, Details: json.RawMessage(`{"k":[1,2]}`)},
			CompletedAt: ptr(t0.Add(2 * time.Second))},
		{RunID: r.ID, Seq: 2, Key: "nap", Kind: store.KindSleep, Status: store.StepSleeping, WakeAt: &wake, StartedAt: t0.Add(3 * time.Second)},
	}
	// Committed out of order: the journal is ordered by Seq, not by commit.
	for _, i := range []int{1, 0, 2} {
		ok(t, f.s.CommitStep(f.ctx, c.Lease, want[i], longLease))
	}
	got := f.steps(r.ID)
	equal(t, "journal length", len(got), 3)
	for i := range want {
		equalStep(t, got[i], want[i])
	}
	ok(t, f.s.Release(f.ctx, c.Lease))
	c = f.claim(r.ID, longLease)
	equal(t, "claimed journal length", len(c.Journal), 3)
	for i := range want {
		equalStep(t, c.Journal[i], want[i])
	}
}

func testCommitStepUpdatesInPlace(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	first := store.Step{RunID: r.ID, Seq: 0, Key: "flaky", Kind: store.KindRun, Status: store.StepRetrying, Attempt: 1,
		Error: &abi.ErrorInfo{Message: "timeout"}, WakeAt: ptr(f.now().Add(-time.Millisecond)), StartedAt: f.now()}
	ok(t, f.s.Suspend(f.ctx, c.Lease, &first, first.WakeAt))
	equalStep(t, f.step(r.ID, "flaky"), first)

	c = f.claim(r.ID, longLease)
	equal(t, "journal after a retry suspension", len(c.Journal), 1)
	equalStep(t, c.Journal[0], first)
	second := store.Step{RunID: r.ID, Seq: 0, Key: "flaky", Kind: store.KindRun, Status: store.StepCompleted, Attempt: 2,
		Output: json.RawMessage(`"ok"`), StartedAt: f.now(), CompletedAt: ptr(f.now())}
	ok(t, f.s.CommitStep(f.ctx, c.Lease, second, longLease))
	steps := f.steps(r.ID)
	equal(t, "rows after an update", len(steps), 1)
	want := second
	want.StartedAt = first.StartedAt // an update keeps when the step first started
	equalStep(t, steps[0], want)
}

func testSuspendAndNextWakeup(t *testing.T, f *fixture) {
	_, found, err := f.s.NextWakeup(f.ctx)
	ok(t, err)
	check(t, !found, "an empty store has a next wake-up")

	sleeper := f.run()
	at, found, err := f.s.NextWakeup(f.ctx)
	ok(t, err)
	check(t, found && !at.After(f.now().Add(time.Second)), "a new run wakes now: got %v %v", at, found)

	c := f.claim(sleeper.ID, longLease)
	wake := f.now().Add(2 * time.Hour)
	nap := store.Step{RunID: sleeper.ID, Seq: 0, Key: "nap", Kind: store.KindSleep, Status: store.StepSleeping, WakeAt: &wake, StartedAt: f.now()}
	ok(t, f.s.Suspend(f.ctx, c.Lease, &nap, &wake))
	got := f.getRun(sleeper.ID)
	equalTime(t, "available at", got.AvailableAt, &wake)
	equal(t, "suspended status", got.Status, store.StatusRunning)
	equalStep(t, f.step(sleeper.ID, "nap"), nap)
	f.noClaim()
	at, found, err = f.s.NextWakeup(f.ctx)
	ok(t, err)
	check(t, found && at.Equal(wake), "next wake-up: got %v %v, want %v", at, found, wake)

	// A run suspended with no time waits for an event only: no wake-up.
	waiter := f.run()
	c = f.claim(waiter.ID, longLease)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, nil))
	check(t, f.getRun(waiter.ID).AvailableAt == nil, "a run suspended until an event is available")
	f.noClaim()
	at, found, err = f.s.NextWakeup(f.ctx)
	ok(t, err)
	check(t, found && at.Equal(wake), "next wake-up with an event-only run: got %v %v, want %v", at, found, wake)

	// A leased run wakes when its lease expires (it is claimable again then).
	held := f.run()
	f.claim(held.ID, longLease)
	at, found, err = f.s.NextWakeup(f.ctx)
	ok(t, err)
	check(t, found && at.After(f.now().Add(longLease-time.Minute)) && at.Before(wake),
		"next wake-up with a leased run: got %v, want its lease expiry about %v", at, f.now().Add(longLease))

	// A wake-up in the past is due now.
	past := f.run()
	c = f.claim(past.ID, longLease)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, ptr(f.now().Add(-time.Second))))
	f.claim(past.ID, longLease)
}

func testFinish(t *testing.T, f *fixture) {
	done := f.run()
	c := f.claim(done.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`{"total":3}`), nil, nil))
	r := f.getRun(done.ID)
	equal(t, "status", r.Status, store.StatusCompleted)
	equalJSON(t, "output", r.Output, `{"total":3}`)
	check(t, r.Error == nil && r.CompletedAt != nil && r.AvailableAt == nil, "completed run: %+v", r)
	wantErr(t, f.s.Finish(f.ctx, c.Lease, store.StatusFailed, nil, &abi.ErrorInfo{Message: "again"}, nil), store.ErrLeaseLost)
	equal(t, "status after a second finish", f.getRun(done.ID).Status, store.StatusCompleted)

	failed := f.run()
	c = f.claim(failed.ID, longLease)
	info := &abi.ErrorInfo{Code: "boom", Message: "it broke", Details: json.RawMessage(`{"line":3}`)}
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusFailed, nil, info, nil))
	r = f.getRun(failed.ID)
	equal(t, "status", r.Status, store.StatusFailed)
	check(t, r.Error != nil && r.Error.Code == "boom" && r.Error.Message == "it broke", "error: %+v", r.Error)
	equalJSON(t, "error details", r.Error.Details, `{"line":3}`)
	check(t, r.CompletedAt != nil, "a failed run has no completion time")

	stuck := f.run()
	c = f.claim(stuck.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusNondeterministic, nil, &abi.ErrorInfo{Code: abi.CodeNondeterministic, Message: "renamed"}, nil))
	r = f.getRun(stuck.ID)
	equal(t, "status", r.Status, store.StatusNondeterministic)
	check(t, r.CompletedAt == nil && r.AvailableAt == nil, "a nondeterministic run waits for a hotfix: %+v", r)
	equal(t, "error code", r.Error.Code, abi.CodeNondeterministic)

	f.noClaim()
	_, found, err := f.s.NextWakeup(f.ctx)
	ok(t, err)
	check(t, !found, "finished runs have a wake-up")
}

// testOneSlotGoesToTheTenantWithFewerInFlight: under a backlog a slot frees one at a time, and
// a claim of one must go to the tenant with a new run and nothing in flight, not to the tenant
// whose backlog is older (the noisy neighbour of issue 13: B's p99 went 23x its p50 while A
// drained a backlog, because each single-slot claim took A's oldest run first).
func testOneSlotGoesToTheTenantWithFewerInFlight(t *testing.T, f *fixture) {
	for range 10 {
		f.run()
	}
	busy, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 3, LeaseFor: longLease, TenantConcurrency: 100})
	ok(t, err)
	equal(t, "the backlog tenant's runs in flight", len(busy), 3)
	other := "quiet-" + f.tenant
	ok(t, f.s.EnsureTenant(f.ctx, other))
	m := f.putModule(other, []byte("module-v1"), false, wf(wfName, "v1"))
	fresh := f.runOf(other, wfName, "v1", m.Digest, "")
	one, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 1, LeaseFor: longLease, TenantConcurrency: 100})
	ok(t, err)
	check(t, len(one) == 1 && one[0].Run.ID == fresh.ID, "a claim of one slot took %v, want the quiet tenant's new run %s", claimIDs(one), fresh.ID)
}

func testClaimIsFairAcrossTenants(t *testing.T, f *fixture) {
	for range 30 {
		f.run()
	}
	other := "small-" + f.tenant
	ok(t, f.s.EnsureTenant(f.ctx, other))
	m := f.putModule(other, []byte("module-v1"), false, wf(wfName, "v1"))
	fresh := f.runOf(other, wfName, "v1", m.Digest, "")

	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 2, LeaseFor: longLease})
	ok(t, err)
	check(t, slices.Contains(claimIDs(claims), fresh.ID), "another tenant's backlog delayed a new run: claimed %v", claimIDs(claims))
	check(t, len(claims) >= 1 && len(claims) <= 2, "claimed %d runs with limit 2", len(claims))
}

func testCommitAndFinish(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	first := store.Step{RunID: r.ID, Seq: 0, Key: "a", Kind: store.KindRun, Status: store.StepCompleted,
		Output: json.RawMessage(`1`), Attempt: 1, StartedAt: f.now(), CompletedAt: ptr(f.now())}
	ok(t, f.s.CommitStep(f.ctx, c.Lease, first, longLease))
	last := first
	last.Seq, last.Key, last.Output = 1, "b", json.RawMessage(`{"v":2}`)
	ok(t, f.s.CommitAndFinish(f.ctx, c.Lease, last, store.StatusCompleted, json.RawMessage(`{"sum":3}`), nil, nil))
	got := f.getRun(r.ID)
	equal(t, "status", got.Status, store.StatusCompleted)
	equalJSON(t, "output", got.Output, `{"sum":3}`)
	steps := f.steps(r.ID)
	equal(t, "steps", len(steps), 2)
	equalStep(t, steps[1], last)

	// Stale: neither the step nor the end is written.
	wantErr(t, f.s.CommitAndFinish(f.ctx, c.Lease, store.Step{RunID: r.ID, Seq: 2, Key: "c", Kind: store.KindRun,
		Status: store.StepCompleted, Output: json.RawMessage(`0`), Attempt: 1, StartedAt: f.now(), CompletedAt: ptr(f.now())}, store.StatusFailed, nil, &abi.ErrorInfo{Message: "late"}, nil),

		store.ErrLeaseLost)
	equal(t, "steps after a stale call", len(f.steps(r.ID)), 2)
	equal(t, "status after a stale call", f.getRun(r.ID).Status, store.StatusCompleted)

	// A failing last step and a failed run.
	bad := f.run()
	c = f.claim(bad.ID, longLease)
	failedStep := store.Step{RunID: bad.ID, Seq: 0, Key: "pay", Kind: store.KindRun, Status: store.StepFailed,
		Error: &abi.ErrorInfo{Code: "declined", Message: "no"}, Attempt: 3, StartedAt: f.now(), CompletedAt: ptr(f.now())}
	ok(t, f.s.CommitAndFinish(f.ctx, c.Lease, failedStep, store.StatusFailed, nil, &abi.ErrorInfo{Code: "declined", Message: "no"}, nil))
	equal(t, "failed run", f.getRun(bad.ID).Status, store.StatusFailed)
	equalStep(t, f.steps(bad.ID)[0], failedStep)
}
