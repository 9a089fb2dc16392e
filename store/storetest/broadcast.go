package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

var broadcastTests = []test{
	{"ResolvesWaitingRuns", testBroadcastResolvesWaitingRuns},
	{"KeptForLaterWaits", testBroadcastKeptForLaterWaits},
	{"RacesWait", testBroadcastRacesWait},
	{"PrunedAfterTheWindow", testBroadcastPrunedAfterTheWindow},
}

// parkedRun creates a run, claims it and parks it on a wait for event with match.
func (f *fixture) parkedRun(tenant, digest, event, match string) store.Run {
	f.t.Helper()
	r := f.runOf(tenant, wfName, "v1", digest, "")
	c := f.claim(r.ID, longLease)
	got, err := f.s.ReachWait(f.ctx, c.Lease, f.waitStep(r.ID, 0, "w", event, match, nil), longLease)
	ok(f.t, err)
	check(f.t, got == nil, "run %s resolved its wait with nothing sent", r.ID)
	return r
}

func testBroadcastResolvesWaitingRuns(t *testing.T, f *fixture) {
	other := "other-" + f.tenant
	ok(t, f.s.EnsureTenant(f.ctx, other))
	otherDigest := f.putModule(other, []byte("module-v1"), false, wf(wfName, "v1")).Digest

	prod := f.parkedRun(f.tenant, f.digest, "deploy", `{"env":"prod"}`)
	anyEnv := f.parkedRun(f.tenant, f.digest, "deploy", "")
	dev := f.parkedRun(f.tenant, f.digest, "deploy", `{"env":"dev"}`)
	otherName := f.parkedRun(f.tenant, f.digest, "rollback", "")
	otherTenant := f.parkedRun(other, otherDigest, "deploy", "")

	res, err := f.s.Broadcast(f.ctx, store.BroadcastParams{TenantID: f.tenant, Event: "deploy", Payload: json.RawMessage(`{"env":"prod","v":2}`)})
	ok(t, err)
	equal(t, "runs resolved", res.Resolved, 2)
	resolved, wantResolved := slices.Clone(res.ResolvedRuns), []string{prod.ID, anyEnv.ID}
	slices.Sort(resolved)
	slices.Sort(wantResolved)
	check(t, slices.Equal(resolved, wantResolved), "resolved runs %v, want %v", resolved, wantResolved)
	a, b := f.step(prod.ID, "w"), f.step(anyEnv.ID, "w")
	for _, s := range []store.Step{a, b} {
		equal(t, "resolved status", s.Status, store.StepCompleted)
		equalJSON(t, "resolved output", s.Output, `{"env":"prod","v":2}`)
		check(t, s.EventID != nil && s.CompletedAt != nil, "a resolved wait has no event id or time: %+v", s)
	}
	equal(t, "one event", *a.EventID, *b.EventID)
	equal(t, "non-matching run", f.step(dev.ID, "w").Status, store.StepWaiting)
	equal(t, "other event name", f.step(otherName.ID, "w").Status, store.StepWaiting)
	otherSteps, err := f.s.ListSteps(f.ctx, other, otherTenant.ID)
	ok(t, err)
	equal(t, "other tenant", otherSteps[0].Status, store.StepWaiting)

	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	got, want := claimIDs(claims), []string{prod.ID, anyEnv.ID}
	slices.Sort(got)
	slices.Sort(want)
	check(t, slices.Equal(got, want), "runnable after the broadcast: got %v, want %v", got, want)

	n, err := f.broadcast(f.tenant, "nobody-waits", json.RawMessage(`{}`))
	ok(t, err)
	equal(t, "runs resolved with no waiters", n, 0)
}

func testBroadcastKeptForLaterWaits(t *testing.T, f *fixture) {
	early1, early2 := f.run(), f.run()
	n, err := f.broadcast(f.tenant, "price", json.RawMessage(`{"sku":"x","p":5}`))
	ok(t, err)
	equal(t, "runs resolved", n, 0)
	f.pass(5 * time.Millisecond) // a run created after the broadcast, not in the same instant
	late := f.run()

	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claims", len(claims), 3)
	lease := map[string]store.Lease{}
	for _, c := range claims {
		lease[c.Run.ID] = c.Lease
	}

	// Runs created before the broadcast each match it once.
	for _, r := range []store.Run{early1, early2} {
		got := reach(t, f, lease[r.ID], f.waitStep(r.ID, 0, "w", "price", `{"sku":"x"}`, nil))
		check(t, got != nil, "run %s created before the broadcast missed it", r.ID)
		equalJSON(t, "kept broadcast", got.Output, `{"sku":"x","p":5}`)
		check(t, got.EventID != nil, "no event id")
	}
	again := reach(t, f, lease[early1.ID], f.waitStep(early1.ID, 1, "w#1", "price", "", nil))
	check(t, again == nil, "one run consumed a broadcast twice")
	// A run created after it does not see it.
	check(t, reach(t, f, lease[late.ID], f.waitStep(late.ID, 0, "w", "price", "", nil)) == nil, "a run saw a broadcast older than itself")

	// The next broadcast resolves the waits now registered.
	n, err = f.broadcast(f.tenant, "price", json.RawMessage(`{"sku":"y"}`))
	ok(t, err)
	equal(t, "runs resolved", n, 2)
	equalJSON(t, "second broadcast", f.step(early1.ID, "w#1").Output, `{"sku":"y"}`)
	equalJSON(t, "second broadcast", f.step(late.ID, "w").Output, `{"sku":"y"}`)
	// A wait reached later by a resolved run does not consume the broadcast that resolved it.
	claims, err = f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	equal(t, "runs resolved by the second broadcast", len(claims), 2)
	for _, c := range claims {
		lease[c.Run.ID] = c.Lease
	}
	check(t, reach(t, f, lease[late.ID], f.waitStep(late.ID, 1, "w#1", "price", `{"sku":"y"}`, nil)) == nil,
		"a broadcast resolved the same run twice")
}

// testBroadcastRacesWait broadcasts while runs reach their waits, many at once and in several
// rounds: each event is either found by the wait (kept) or resolves the registered wait, never
// both and never neither.
func testBroadcastRacesWait(t *testing.T, f *fixture) {
	const (
		rounds = 3
		n      = 30
	)
	for round := range rounds {
		runs := make([]store.Run, n)
		for i := range runs {
			runs[i] = f.run()
		}
		claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: n, LeaseFor: longLease})
		ok(t, err)
		equal(t, "claims", len(claims), n)
		type outcome struct {
			resolved          *store.Step
			broadcastResolved int
			waitErr, sendErr  error
		}
		out := make([]outcome, n)
		var wg sync.WaitGroup
		for i, c := range claims {
			match := fmt.Sprintf(`{"run":%q}`, c.Run.ID)
			wg.Go(func() {
				out[i].resolved, out[i].waitErr = f.s.ReachWait(f.ctx, c.Lease, f.waitStep(c.Run.ID, 0, "w", "race", match, nil), longLease)
			})
			wg.Go(func() {
				out[i].broadcastResolved, out[i].sendErr = f.broadcast(f.tenant, "race",
					json.RawMessage(fmt.Sprintf(`{"run":%q,"round":%d}`, c.Run.ID, round)))
			})
		}
		wg.Wait()
		for i, c := range claims {
			o := out[i]
			check(t, o.waitErr == nil && o.sendErr == nil, "round %d run %d: wait: %v; broadcast: %v", round, i, o.waitErr, o.sendErr)
			check(t, (o.resolved != nil) != (o.broadcastResolved == 1),
				"round %d run %d: found by the wait %v, resolved by the broadcast %d: want exactly one",
				round, i, o.resolved != nil, o.broadcastResolved)
			s := f.step(c.Run.ID, "w")
			equal(t, "wait status", s.Status, store.StepCompleted)
			equalJSON(t, "wait output", s.Output, fmt.Sprintf(`{"run":%q,"round":%d}`, c.Run.ID, round))
		}
		// Finish them so the next round's claim sees only its own runs.
		for _, c := range claims {
			err := f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, nil, nil, nil)
			ok(t, err)
		}
	}
}

// broadcast sends an event with no id and no triggered runs, and returns how many waits it
// resolved.
func (f *fixture) broadcast(tenant, event string, payload json.RawMessage) (int, error) {
	res, err := f.s.Broadcast(f.ctx, store.BroadcastParams{TenantID: tenant, Event: event, Payload: payload})
	return res.Resolved, err
}

// testBroadcastPrunedAfterTheWindow: pruning deletes the broadcast events received before the
// cutoff, oldest first and a batch at a time. A run that reaches its wait afterwards no longer
// gets them, their event ids may be sent again, and an event sent to one run stays.
func testBroadcastPrunedAfterTheWindow(t *testing.T, f *fixture) {
	early, target := f.run(), f.run() // created before every event, so each would match their waits
	_, err := f.s.Broadcast(f.ctx, store.BroadcastParams{TenantID: f.tenant, Event: "price",
		Payload: json.RawMessage(`{"p":1}`), EventID: "evt-1"})
	ok(t, err)
	_, err = f.broadcast(f.tenant, "price", json.RawMessage(`{"p":2}`))
	ok(t, err)
	delivered, err := deliveredOf(f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: target.ID, Event: "price", Payload: json.RawMessage(`{"p":3}`), MaxBuffered: 10}))
	ok(t, err)
	check(t, !delivered, "a signal to a run not waiting yet was delivered")

	n, err := f.s.PruneBroadcasts(f.ctx, f.now().Add(-time.Hour), 10)
	ok(t, err)
	equal(t, "pruned with a cutoff before the events", n, 0)
	cutoff := f.now().Add(time.Hour)
	for i, want := range []int{1, 1, 0} {
		n, err := f.s.PruneBroadcasts(f.ctx, cutoff, 1)
		ok(t, err)
		equal(t, fmt.Sprintf("batch %d", i+1), n, want)
	}

	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claims", len(claims), 2)
	leases := map[string]store.Lease{}
	for _, c := range claims {
		leases[c.Run.ID] = c.Lease
	}
	got, err := f.s.ReachWait(f.ctx, leases[early.ID], f.waitStep(early.ID, 0, "w", "price", "", nil), longLease)
	ok(t, err)
	check(t, got == nil, "a wait reached after pruning got a pruned broadcast: %+v", got)
	got, err = f.s.ReachWait(f.ctx, leases[target.ID], f.waitStep(target.ID, 0, "w", "price", "", nil), longLease)
	ok(t, err)
	check(t, got != nil, "the event signalled to the run was pruned with the broadcasts")
	equalJSON(t, "the signalled event", got.Output, `{"p":3}`)

	res, err := f.s.Broadcast(f.ctx, store.BroadcastParams{TenantID: f.tenant, Event: "price",
		Payload: json.RawMessage(`{"p":4}`), EventID: "evt-1"})
	ok(t, err)
	check(t, !res.Duplicate, "a pruned event id is still taken")
	equal(t, "runs the resent event resolved", res.Resolved, 1)
}
