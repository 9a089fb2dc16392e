package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/wfhost/wfhost/store"
)

var signalWithStartTests = []test{
	{"StartsAndKeepsTheEvent", testSignalWithStartStarts},
	{"SignalsTheOpenRun", testSignalWithStartSignalsTheOpenRun},
	{"StartsAgainAfterTheRunEnded", testSignalWithStartAfterTheRunEnded},
	{"SignalIDMakesItIdempotent", testSignalWithStartSignalID},
	{"Races", testSignalWithStartRaces},
}

// signalWithStart sends event with payload to the run key names, started if need be.
func (f *fixture) signalWithStart(key, event, payload, signalID string) store.SignalWithStartResult {
	f.t.Helper()
	res, err := f.s.SignalWithStart(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
		Input: json.RawMessage(`{"n":1}`), IdempotencyKey: key, RetentionDays: 7},
		store.SignalParams{Event: event, Payload: json.RawMessage(payload), SignalID: signalID, MaxBuffered: 100})
	ok(f.t, err)
	return res
}

// With no run under the key, a run is created pending with the event kept for it: its first
// wait takes it.
func testSignalWithStartStarts(t *testing.T, f *fixture) {
	res := f.signalWithStart("order-1", "paid", `{"amount":3}`, "")
	check(t, res.Created, "no run was created")
	equal(t, "signal", res.Signal, store.SignalResult{})
	equal(t, "status", res.Run.Status, store.StatusPending)
	equal(t, "key", res.Run.IdempotencyKey, "order-1")
	c := f.claim(res.Run.ID, longLease)
	got := reach(t, f, c.Lease, f.waitStep(res.Run.ID, 0, "w", "paid", "", nil))
	check(t, got != nil, "the new run's wait did not find the event")
	equalJSON(t, "the wait's output", got.Output, `{"amount":3}`)
}

// With an open run under the key, no run is created and the event goes to that run.
func testSignalWithStartSignalsTheOpenRun(t *testing.T, f *fixture) {
	r := f.runOf(f.tenant, wfName, "v1", f.digest, "order-2")
	c := f.claim(r.ID, longLease)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 0, "w", "paid", "", nil)) == nil, "resolved with nothing sent")
	res := f.signalWithStart("order-2", "paid", `{"amount":4}`, "")
	check(t, !res.Created, "a second run was created for an open one")
	equal(t, "run", res.Run.ID, r.ID)
	equal(t, "signal", res.Signal, store.SignalResult{Delivered: true})
	equalJSON(t, "the wait's output", f.step(r.ID, "w").Output, `{"amount":4}`)
	again := f.signalWithStart("order-2", "shipped", `{}`, "")
	check(t, !again.Created && again.Run.ID == r.ID, "a second run was created for an open one: %+v", again)
	equal(t, "signal to a run waiting for nothing", again.Signal, store.SignalResult{})
}

// With the run under the key ended, a new run takes the key and the event; the ended run is
// kept, without the key.
func testSignalWithStartAfterTheRunEnded(t *testing.T, f *fixture) {
	old := f.runOf(f.tenant, wfName, "v1", f.digest, "order-3")
	c := f.claim(old.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`"done"`), nil, nil))
	res := f.signalWithStart("order-3", "paid", `{"amount":5}`, "")
	check(t, res.Created && res.Run.ID != old.ID, "no new run for an ended one: %+v", res)
	equal(t, "the new run's key", res.Run.IdempotencyKey, "order-3")
	ended := f.getRun(old.ID)
	equal(t, "the ended run's status", ended.Status, store.StatusCompleted)
	equal(t, "the ended run's key", ended.IdempotencyKey, "")
	// A plain start with the key now finds the new run.
	r, created, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
		Input: json.RawMessage(`{}`), IdempotencyKey: "order-3", RetentionDays: 7})
	ok(t, err)
	check(t, !created && r.ID == res.Run.ID, "a start with the key did not find the new run: created %v, %s", created, r.ID)
	c = f.claim(res.Run.ID, longLease)
	got := reach(t, f, c.Lease, f.waitStep(res.Run.ID, 0, "w", "paid", "", nil))
	check(t, got != nil, "the new run's wait did not find the event")
}

// A signal id makes a retried signal-with-start change nothing while its run is open: no
// second event, no second run. (Ids are per run: once the run has ended, the retry starts a
// new one, as any signal-with-start to an ended run does.)
func testSignalWithStartSignalID(t *testing.T, f *fixture) {
	first := f.signalWithStart("order-4", "paid", `1`, "pay-1")
	check(t, first.Created, "no run was created")
	again := f.signalWithStart("order-4", "paid", `2`, "pay-1")
	check(t, !again.Created && again.Run.ID == first.Run.ID, "the retry made another run: %+v", again)
	equal(t, "the retry's signal", again.Signal, store.SignalResult{Duplicate: true})
	c := f.claim(first.Run.ID, longLease)
	got := reach(t, f, c.Lease, f.waitStep(first.Run.ID, 0, "w", "paid", "", nil))
	check(t, got != nil, "the event was lost")
	equalJSON(t, "the wait's output", got.Output, `1`)
	check(t, reach(t, f, c.Lease, f.waitStep(first.Run.ID, 1, "w#1", "paid", "", nil)) == nil, "the retry's event was kept too")
}

// Many callers at once with one new key make one run, which keeps every caller's event.
func testSignalWithStartRaces(t *testing.T, f *fixture) {
	const callers = 8
	results := atOnce(t, callers, func(i int) (store.SignalWithStartResult, error) {
		return f.s.SignalWithStart(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
			Input: json.RawMessage(`{}`), IdempotencyKey: "order-5", RetentionDays: 7},
			store.SignalParams{Event: "e", Payload: json.RawMessage(fmt.Sprint(i)), MaxBuffered: 100})
	})
	created, ids := 0, map[string]bool{}
	for _, res := range results {
		if res.Created {
			created++
		}
		ids[res.Run.ID] = true
	}
	equal(t, "runs created", created, 1)
	equal(t, "runs named", len(ids), 1)
	var runID string
	for id := range ids {
		runID = id
	}
	c := f.claim(runID, longLease)
	seen := map[string]bool{}
	for i := range callers {
		got := reach(t, f, c.Lease, f.waitStep(runID, i, fmt.Sprint("w", i), "e", "", nil))
		check(t, got != nil, "event %d of %d was lost", i+1, callers)
		seen[string(got.Output)] = true
	}
	equal(t, "distinct events", len(seen), callers)
}
