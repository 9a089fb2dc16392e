package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/wfhost/wfhost/store"
)

var raceTests = []test{
	{"ClaimersNeverShareALease", testClaimersNeverShareALease},
	{"EpochsGrowAndFenceEveryOlderLease", testEpochsGrowAndFenceEveryOlderLease},
	{"ConcurrentSignalsKeepTheBufferBound", testConcurrentSignalsKeepTheBufferBound},
}

// testClaimersNeverShareALease: claimers that claim, commit a step under their lease and
// release, over and over, on the same few runs. A held run is never handed to a second claimer
// (every commit under a fresh claim succeeds), each (run, epoch) is handed out once, and the
// journal holds exactly the steps that were committed.
func testClaimersNeverShareALease(t *testing.T, f *fixture) {
	const (
		runs     = 6
		claimers = 6
		rounds   = 15
	)
	for range runs {
		f.run()
	}
	var (
		mu        sync.Mutex
		handedOut = map[store.Lease]int{}
		committed = map[string]int{} // run -> steps committed
		wg        sync.WaitGroup
	)
	for c := range claimers {
		wg.Go(func() {
			for round := range rounds {
				claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: fmt.Sprint("claimer-", c), Limit: 2, LeaseFor: longLease})
				if err != nil {
					t.Error(err)
					return
				}
				for i, cl := range claims {
					mu.Lock()
					handedOut[cl.Lease]++
					seq := committed[cl.Run.ID]
					mu.Unlock()
					// Holding the lease, nobody else may write this run: the next seq is ours.
					err := f.s.CommitStep(f.ctx, cl.Lease, store.Step{RunID: cl.Run.ID, Seq: seq, Key: fmt.Sprintf("c%d-r%d-%d", c, round, i),
						Kind: store.KindRun, Status: store.StepCompleted, Output: json.RawMessage(`1`), Attempt: 1,
						StartedAt: f.now(), CompletedAt: ptr(f.now())}, longLease)
					if err != nil {
						t.Errorf("claimer %d: commit under a fresh claim of %s: %v (another claimer holds the run)", c, cl.Run.ID, err)
						return
					}
					mu.Lock()
					committed[cl.Run.ID]++
					mu.Unlock()
					if err := f.s.Release(f.ctx, cl.Lease); err != nil {
						t.Errorf("claimer %d: release: %v", c, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for l, n := range handedOut {
		equal(t, fmt.Sprint("claims of run ", l.RunID, " epoch ", l.Epoch), n, 1)
	}
	total := 0
	for id, n := range committed {
		steps := f.steps(id)
		equal(t, "journal rows of run "+id, len(steps), n)
		for i, s := range steps {
			equal(t, "seq", s.Seq, i)
		}
		total += n
	}
	check(t, total > 0, "no claim succeeded")
}

// testEpochsGrowAndFenceEveryOlderLease: every claim of a run bumps its epoch, and every lease
// it ever had, not only the last, is fenced out once a newer one exists.
func testEpochsGrowAndFenceEveryOlderLease(t *testing.T, f *fixture) {
	r := f.run()
	var leases []store.Lease
	for i := range 5 {
		c := f.claim(r.ID, longLease)
		if i > 0 {
			check(t, c.Lease.Epoch > leases[i-1].Epoch, "epoch %d after %d", c.Lease.Epoch, leases[i-1].Epoch)
		}
		leases = append(leases, c.Lease)
		ok(t, f.s.Release(f.ctx, c.Lease))
	}
	cur := f.claim(r.ID, longLease)
	for _, old := range leases {
		fencedWrites(t, f, old, "a")
	}
	equal(t, "journal after stale writes", len(f.steps(r.ID)), 0)
	ok(t, f.s.CommitStep(f.ctx, cur.Lease, store.Step{RunID: r.ID, Key: "a", Kind: store.KindRun, Status: store.StepCompleted,
		Output: json.RawMessage(`1`), Attempt: 1, StartedAt: f.now(), CompletedAt: ptr(f.now())}, longLease))
	equal(t, "journal after the current holder's commit", len(f.steps(r.ID)), 1)
}

// testConcurrentSignalsKeepTheBufferBound: many signals to one run at once, with room for a
// few: exactly that many are kept, the rest refused with ErrLimit, none lost or doubled.
func testConcurrentSignalsKeepTheBufferBound(t *testing.T, f *fixture) {
	const (
		senders = 20
		room    = 5
	)
	r := f.run()
	var (
		wg            sync.WaitGroup
		mu            sync.Mutex
		kept, refused int
	)
	for i := range senders {
		wg.Go(func() {
			delivered, err := deliveredOf(f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: r.ID, Event: "e", Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), MaxBuffered: room}))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, store.ErrLimit):
				refused++
			case err != nil:
				t.Errorf("signal %d: %v", i, err)
			case delivered:
				t.Errorf("signal %d delivered to a run that waits for nothing", i)
			default:
				kept++
			}
		})
	}
	wg.Wait()
	equal(t, "signals kept", kept, room)
	equal(t, "signals refused", refused, senders-room)
	c := f.claim(r.ID, longLease)
	seen := map[string]bool{}
	for i := range room {
		got := reach(t, f, c.Lease, f.waitStep(r.ID, i, fmt.Sprint("w", i), "e", "", nil))
		check(t, got != nil, "kept signal %d lost", i)
		check(t, !seen[string(got.Output)], "signal %s consumed twice", got.Output)
		seen[string(got.Output)] = true
	}
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, room, "w-last", "e", "", nil)) == nil, "more signals kept than the bound")
}
