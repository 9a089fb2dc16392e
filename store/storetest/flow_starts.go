package storetest

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// A run of a workflow with flow control obeys it whichever way it is started: a plain
// CreateRun, an event's trigger, a signal-with-start, a child of another workflow and a
// restart all queue behind the key's limit. A child of its parent's own workflow runs in its
// parent's slot, or a parent awaiting it would wait forever. A start whose input names no key
// is refused: CreateRun with abi.ErrFlowKey, a trigger starts nothing, a child step fails
// with child_refused.
func testFlowEveryStart(t *testing.T, f *fixture) {
	digest := f.flowWorkflow("fs", abi.Flow{Concurrency: &abi.FlowConcurrency{Key: "$.c", Limit: 1}})
	next := func(key, input string) store.NewRun {
		return store.NewRun{TenantID: f.tenant, Workflow: "fs", Version: "v1", Digest: digest,
			Input: json.RawMessage(input), IdempotencyKey: key, RetentionDays: 7}
	}
	first, _ := startFlow(t, f, f.s, "fs", `{"c":"a"}`, nil)
	cf := f.claim(first.ID, longLease)

	_, self, err := f.s.StartChild(f.ctx, cf.Lease, nil, f.childStep(first.ID, 0, "self"), next("self-1", `{"c":"a"}`),
		store.ChildLink{ParentRunID: first.ID, ParentKey: "self", ParentClose: abi.ParentCloseAbandon}, longLease)
	ok(t, err)
	check(t, f.getRun(self).AvailableAt != nil, "a child of its parent's own workflow is held behind its parent's slot")
	f.end(f.getRun(self), `1`)

	held := map[string]string{}
	r, created, err := f.s.CreateRun(f.ctx, next("", `{"c":"a"}`))
	ok(t, err)
	check(t, created, "CreateRun created nothing")
	held["CreateRun"] = r.ID
	res, err := f.s.Broadcast(f.ctx, store.BroadcastParams{TenantID: f.tenant, Event: "go", Payload: json.RawMessage(`{}`),
		Start: []store.NewRun{next("", `{"c":"a"}`), next("", `{"x":1}`), next("", `{"c":{"deep":true}}`)}})
	ok(t, err)
	if len(res.Started) != 1 {
		t.Fatalf("a trigger started %d runs, want 1 (two inputs name no key)", len(res.Started))
	}
	held["a trigger"] = res.Started[0].ID
	sw, err := f.s.SignalWithStart(f.ctx, next("sw-1", `{"c":"a"}`), store.SignalParams{Event: "e", Payload: json.RawMessage(`1`), MaxBuffered: 10})
	ok(t, err)
	check(t, sw.Created, "signal-with-start created nothing")
	held["a signal-with-start"] = sw.Run.ID

	parent := f.run()
	cp := f.claim(parent.ID, longLease)
	detached := store.ChildLink{ParentRunID: parent.ID, ParentKey: "kid", ParentClose: abi.ParentCloseAbandon}
	_, kid, err := f.s.StartChild(f.ctx, cp.Lease, nil, f.childStep(parent.ID, 0, "kid"), next("kid-1", `{"c":"a"}`), detached, longLease)
	ok(t, err)
	held["a child"] = kid
	detached.ParentKey = "bad"
	row, none, err := f.s.StartChild(f.ctx, cp.Lease, nil, f.childStep(parent.ID, 1, "bad"), next("kid-2", `[1,2]`), detached, longLease)
	ok(t, err)
	check(t, row.Status == store.StepFailed && row.Error != nil && row.Error.Code == abi.CodeChildRefused && none == "",
		"a child whose input names no key: %+v, run %q, want the step failed child_refused", row, none)
	_, _, err = f.s.CreateRun(f.ctx, next("", `"not an object"`))
	check(t, errors.Is(err, abi.ErrFlowKey), "CreateRun of an input with no key: %v, want abi.ErrFlowKey", err)

	for how, id := range held {
		check(t, f.getRun(id).AvailableAt == nil, "%s: claimable past the key's limit", how)
		fl := f.flowOf(id)
		check(t, fl.Concurrency != nil && fl.Concurrency.Held && fl.Concurrency.Key == "a", "%s: flow %+v, want held under key a", how, fl.Concurrency)
	}
	f.noClaim()

	// first's end hands its slot to the oldest waiting run; a restart of first queues.
	ok(t, f.s.Finish(f.ctx, cf.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	restarted, err := f.s.RestartRun(f.ctx, first.ID, 0, next("", `{"c":"a"}`))
	ok(t, err)
	check(t, restarted.AvailableAt == nil && f.flowOf(restarted.ID).Concurrency.Held, "a restart is claimable past the key's limit: %+v", restarted)
	claims := f.claimAll()
	check(t, len(claims) == 1 && claims[0].Run.ID == held["CreateRun"], "claimed %v after the end, want only the oldest waiting run %s",
		claimIDs(claims), held["CreateRun"])
}

// Starts triggered by a burst of events of one key, under a debounce, become one run with the
// last event's input; a signal-with-start is never merged into it (its key names its run).
func testFlowTriggerDebounced(t *testing.T, f *fixture) {
	digest := f.flowWorkflow("fd", abi.Flow{Debounce: &abi.FlowDebounce{Key: "$.c", PeriodMs: 60_000}})
	next := func(key, input string) store.NewRun {
		return store.NewRun{TenantID: f.tenant, Workflow: "fd", Version: "v1", Digest: digest,
			Input: json.RawMessage(input), IdempotencyKey: key, RetentionDays: 7}
	}
	var ids []string
	for _, in := range []string{`{"c":"a","n":1}`, `{"c":"a","n":2}`, `{"c":"a","n":3}`} {
		res, err := f.s.Broadcast(f.ctx, store.BroadcastParams{TenantID: f.tenant, Event: "burst", Payload: json.RawMessage(in),
			Start: []store.NewRun{next("", in)}})
		ok(t, err)
		if len(res.Started) != 1 {
			t.Fatalf("started %d runs, want 1", len(res.Started))
		}
		ids = append(ids, res.Started[0].ID)
	}
	check(t, ids[0] == ids[1] && ids[1] == ids[2], "a burst of one key started runs %v, want one", ids)
	equalJSON(t, "the debounced run's input", f.getRun(ids[0]).Input, `{"c":"a","n":3}`)
	sw, err := f.s.SignalWithStart(f.ctx, next("sw-1", `{"c":"a","n":4}`), store.SignalParams{Event: "e", Payload: json.RawMessage(`1`), MaxBuffered: 10})
	ok(t, err)
	check(t, sw.Created && sw.Run.ID != ids[0], "a signal-with-start was merged into the debounced run")
}
