package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

var retentionTests = []test{
	{"SweepTakesAllOfARun", testSweepTakesAllOfARun},
	{"SweepGoesByExpiry", testSweepGoesByExpiry},
}

// testSweepTakesAllOfARun: a swept run leaves nothing behind (journal, buffered events,
// outbound audit records), and nothing of a run that is kept is touched.
func testSweepTakesAllOfARun(t *testing.T, f *fixture) {
	n, err := f.s.SweepExpired(f.ctx, 100)
	ok(t, err)
	equal(t, "swept from a store with nothing expired", n, 0)

	mk := func(retention int) store.Run {
		r, _, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
			Input: json.RawMessage(`{}`), RetentionDays: retention})
		ok(t, err)
		return r
	}
	gone, kept := mk(0), mk(30)
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claims", len(claims), 2)
	for _, c := range claims {
		ok(t, f.s.RecordOutbound(f.ctx, store.OutboundRecord{TenantID: f.tenant, RunID: c.Run.ID, Step: "s", Method: "GET",
			Host: "api.example.com", Path: "/", Status: 200, At: f.now()}))
		check(t, !f.sendSignal(c.Run.ID), "a signal to a run that waits for nothing was delivered")
		ok(t, f.s.CommitAndFinish(f.ctx, c.Lease, store.Step{RunID: c.Run.ID, Key: "s", Kind: store.KindRun, Status: store.StepCompleted,
			Output: json.RawMessage(`1`), Attempt: 1, StartedAt: f.now(), CompletedAt: ptr(f.now())}, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	}
	f.pass(2 * time.Millisecond) // expiry is "before now": let now move past it
	n, err = f.s.SweepExpired(f.ctx, 100)
	ok(t, err)
	equal(t, "swept", n, 1)

	_, err = f.s.GetRun(f.ctx, f.tenant, gone.ID)
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.ListSteps(f.ctx, f.tenant, gone.ID)
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.ListOutbound(f.ctx, f.tenant, gone.ID)
	wantErr(t, err, store.ErrNotFound)
	runs, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{})
	ok(t, err)
	check(t, len(runs) == 1 && runs[0].ID == kept.ID, "runs after the sweep: %v, want only %s", ids(runs), kept.ID)

	equal(t, "kept run's journal", len(f.steps(kept.ID)), 1)
	out, err := f.s.ListOutbound(f.ctx, f.tenant, kept.ID)
	ok(t, err)
	equal(t, "kept run's audit trail", len(out), 1)
	n, err = f.s.SweepExpired(f.ctx, 100)
	ok(t, err)
	equal(t, "swept again", n, 0)
}

// testSweepGoesByExpiry: a batch takes the runs that expired first, and a cancelled run
// expires by its retention like any other end.
func testSweepGoesByExpiry(t *testing.T, f *fixture) {
	var order []string
	for range 3 {
		r, _, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
			Input: json.RawMessage(`{}`), RetentionDays: 0})
		ok(t, err)
		_, err = f.s.CancelRun(f.ctx, f.tenant, r.ID)
		ok(t, err)
		order = append(order, r.ID)
		f.pass(2 * time.Millisecond) // distinct expiry instants
	}
	for i, id := range order {
		n, err := f.s.SweepExpired(f.ctx, 1)
		ok(t, err)
		equal(t, "batch of one", n, 1)
		_, err = f.s.GetRun(f.ctx, f.tenant, id)
		wantErr(t, err, store.ErrNotFound)
		for _, later := range order[i+1:] {
			f.getRun(later) // not swept before the ones that expired earlier
		}
	}
}
