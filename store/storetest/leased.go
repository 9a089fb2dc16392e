package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

// Runs created leased to the host that starts them (CreateLeasedRun): the start-here path
// that skips the claim.
var leasedTests = []test{
	{"LeasedRunIsHeld", testLeasedRunIsHeld},
	{"LeasedRunIdempotent", testLeasedRunIdempotent},
	{"LeasedRunExpires", testLeasedRunExpires},
	{"LeasedRunNearTheCap", testLeasedRunNearTheCap},
	{"LeasedRunResolvesTheWorkflow", testLeasedRunResolvesTheWorkflow},
	{"RunWithoutOwnerIsQueued", testRunWithoutOwnerIsQueued},
}

// leased starts a run of wfName v1 leased to "here" (no cap unless to says so).
func (f *fixture) leased(key string, to store.LeaseTo) (store.Claim, bool) {
	f.t.Helper()
	to.Owner = "here"
	if to.LeaseFor == 0 {
		to.LeaseFor = longLease
	}
	c, created, err := f.s.CreateLeasedRun(f.ctx, store.NewRun{
		TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
		Input: json.RawMessage(`{"n":1}`), IdempotencyKey: key, RetentionDays: 7,
	}, to)
	ok(f.t, err)
	return c, created
}

func testLeasedRunIsHeld(t *testing.T, f *fixture) {
	c, created := f.leased("", store.LeaseTo{})
	check(t, created, "a new run is not created")
	equal(t, "lease run", c.Lease.RunID, c.Run.ID)
	equal(t, "lease epoch", c.Lease.Epoch, int64(1))
	equal(t, "status", c.Run.Status, store.StatusRunning)
	equal(t, "activations", c.Run.Activations, 1)
	check(t, c.Run.StartedAt != nil, "a leased run has no start time")
	equal(t, "journal", len(c.Journal), 0)
	equalJSON(t, "input", c.Run.Input, `{"n":1}`)
	equal(t, "stored status", f.getRun(c.Run.ID).Status, store.StatusRunning)

	// Nobody else can claim it while the lease holds, and the lease fences writes like a
	// claimed one: the run's step and end commit under it.
	f.noClaim()
	ok(t, f.s.CommitAndFinish(f.ctx, c.Lease, store.Step{RunID: c.Run.ID, Key: "a", Kind: store.KindRun,
		Status: store.StepCompleted, Output: json.RawMessage(`1`), Attempt: 1, StartedAt: f.now(), CompletedAt: ptr(f.now())}, store.StatusCompleted, json.RawMessage(`{"ok":true}`), nil, nil))
	got := f.getRun(c.Run.ID)
	equal(t, "status after finishing", got.Status, store.StatusCompleted)
	equalJSON(t, "output", got.Output, `{"ok":true}`)
	equal(t, "journal after finishing", len(f.steps(c.Run.ID)), 1)
}

func testLeasedRunIdempotent(t *testing.T, f *fixture) {
	first, created := f.leased("k", store.LeaseTo{})
	check(t, created, "the first start did not create the run")
	again, created := f.leased("k", store.LeaseTo{})
	check(t, !created, "a reused key created a second run")
	equal(t, "run of the reused key", again.Run.ID, first.Run.ID)
	equal(t, "lease of an existing run", again.Lease, store.Lease{})
	equal(t, "activations of the existing run", f.getRun(first.Run.ID).Activations, 1)
	// The key is shared with CreateRun's.
	r, created, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1",
		Digest: f.digest, Input: json.RawMessage(`{}`), IdempotencyKey: "k"})
	ok(t, err)
	check(t, !created && r.ID == first.Run.ID, "CreateRun with the key: created %v run %s, want run %s", created, r.ID, first.Run.ID)
	// The first lease still holds.
	ok(t, f.s.Release(f.ctx, first.Lease))
}

func testLeasedRunExpires(t *testing.T, f *fixture) {
	c, _ := f.leased("", store.LeaseTo{LeaseFor: 20 * time.Millisecond})
	f.pass(60 * time.Millisecond)
	// A host that started a run and died leaves it to the others, as a claim would.
	c2 := f.claim(c.Run.ID, longLease)
	equal(t, "epoch of the next claim", c2.Lease.Epoch, int64(2))
	equal(t, "activations", c2.Run.Activations, 2)
	wantErr(t, f.s.Release(f.ctx, c.Lease), store.ErrLeaseLost)
}

func testLeasedRunNearTheCap(t *testing.T, f *fixture) {
	notices := f.listener()
	// The tenant holds one run under a cap of 3; this host may lease 2 at once: 1+2 <= 3.
	held := f.run()
	f.claim(held.ID, longLease)
	to := store.LeaseTo{TenantCap: 3, Reserve: 2}
	c, created := f.leased("", to)
	check(t, created && c.Lease.Epoch == 1, "within the cap: created %v lease %+v, want a leased run", created, c.Lease)

	// Now it holds two: 2+2 > 3, so the run is queued for the claim, and the hosts are woken.
	queued, created := f.leased("", to)
	check(t, created, "a run near the cap was not created")
	equal(t, "lease of a queued run", queued.Lease, store.Lease{})
	equal(t, "status of a queued run", queued.Run.Status, store.StatusPending)
	equal(t, "activations of a queued run", queued.Run.Activations, 0)
	f.expect(notices, store.NoticeWake, "", "a run queued near the cap")
	f.claim(queued.Run.ID, longLease)
}

// CreateLeasedRun resolves the workflow itself, as ResolveWorkflow does, and applies the
// retention rule of store.RetentionDays.
func testLeasedRunResolvesTheWorkflow(t *testing.T, f *fixture) {
	start := func(version string, n store.NewRun) (store.Claim, error) {
		n.TenantID, n.Workflow, n.Version, n.Input = f.tenant, wfName, version, json.RawMessage(`{}`)
		c, _, err := f.s.CreateLeasedRun(f.ctx, n, store.LeaseTo{Owner: "here", LeaseFor: longLease})
		return c, err
	}
	// The latest bound version, whatever Digest says.
	c, err := start("", store.NewRun{Digest: "ignored", DefaultRetentionDays: 30})
	ok(t, err)
	equal(t, "version", c.Run.Version, "v1")
	equal(t, "digest", c.Run.Digest, f.digest)
	equal(t, "default retention", c.Run.RetentionDays, 30)
	v2 := wf(wfName, "v2")
	v2.RetentionDays = 9
	d2 := f.putModule(f.tenant, []byte("module-v2"), false, v2).Digest
	c, err = start("", store.NewRun{DefaultRetentionDays: 30})
	ok(t, err)
	equal(t, "version after binding v2", c.Run.Version, "v2")
	equal(t, "digest after binding v2", c.Run.Digest, d2)
	equal(t, "the workflow's retention", c.Run.RetentionDays, 9)
	// A pinned version, a requested retention and the ceiling.
	c, err = start("v1", store.NewRun{RetentionDays: 400, DefaultRetentionDays: 30, MaxRetentionDays: 365})
	ok(t, err)
	equal(t, "pinned version", c.Run.Version, "v1")
	equal(t, "retention at the ceiling", c.Run.RetentionDays, 365)
	// Unknown workflows and versions are not found, and nothing is inserted.
	_, err = start("v9", store.NewRun{})
	wantErr(t, err, store.ErrNotFound)
	_, _, err = f.s.CreateLeasedRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: "nope", IdempotencyKey: "k"},
		store.LeaseTo{Owner: "here", LeaseFor: longLease})
	wantErr(t, err, store.ErrNotFound)
	runs, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{})
	ok(t, err)
	equal(t, "runs", len(runs), 3)
}

// With no owner (the starting host has no free slot) the run is created pending, resolved in
// the same statement, and the hosts are woken to claim it.
func testRunWithoutOwnerIsQueued(t *testing.T, f *fixture) {
	notices := f.listener()
	c, created, err := f.s.CreateLeasedRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName,
		Input: json.RawMessage(`{}`), DefaultRetentionDays: 30}, store.LeaseTo{})
	ok(t, err)
	check(t, created, "the run was not created")
	equal(t, "lease of a queued run", c.Lease, store.Lease{})
	equal(t, "status of a queued run", c.Run.Status, store.StatusPending)
	equal(t, "digest", c.Run.Digest, f.digest)
	f.expect(notices, store.NoticeWake, "", "a run created without an owner")
	f.claim(c.Run.ID, longLease)
}
