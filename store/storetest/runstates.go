package storetest

import (
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var runStateTests = []test{
	{"CountedByState", testRunStatesCounted},
}

// testRunStatesCounted: one live run in each state counts once in it; an ended run counts
// nowhere.
func testRunStatesCounted(t *testing.T, f *fixture) {
	f.parkedRun(f.tenant, f.digest, "e", "") // waiting

	sleeping := f.run()
	c := f.claim(sleeping.ID, longLease)
	wake := f.now().Add(time.Hour)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, &wake))

	paused := f.run()
	c = f.claim(paused.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusNondeterministic, nil, &abi.ErrorInfo{Code: abi.CodeNondeterministic, Message: "renamed"}, nil))

	done := f.run()
	c = f.claim(done.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, nil, nil, nil))

	running := f.run()
	f.claim(running.ID, longLease)
	f.run() // queued: created last, so no claim above took it

	counts, err := f.s.CountRunStates(f.ctx)
	ok(t, err)
	got := map[store.RunState]int{}
	for _, c := range counts {
		if c.TenantID == f.tenant {
			got[c.State] += c.Runs
		}
	}
	for _, s := range store.RunStates {
		equal(t, "runs "+string(s), got[s], 1)
	}
	equal(t, "states counted", len(got), len(store.RunStates))
}
