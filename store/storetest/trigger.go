package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// trigger is what RunTrigger says started run id.
func (f *fixture) trigger(id string) store.Trigger {
	f.t.Helper()
	t, err := f.s.RunTrigger(f.ctx, f.tenant, id)
	ok(f.t, err)
	return t
}

// RunTrigger says what started a run, whichever way it was started: a client's start (leased
// or not), a schedule's, an event trigger's and a signal-with-start from what the start wrote;
// a child, a hook's start, a continuation, a retry and a restart from what the store keeps
// already. An unknown, malformed or other tenant's run is ErrNotFound.
func testTriggeredBy(t *testing.T, f *fixture) {
	start := func(key string, trig *store.Trigger) store.Run {
		r, created, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
			Input: json.RawMessage(`{"n":1}`), IdempotencyKey: key, RetentionDays: 7, Trigger: trig})
		ok(t, err)
		check(t, created, "run %q not created", key)
		return r
	}
	equal(t, "a client's start", f.trigger(start("plain", nil).ID), store.Trigger{Kind: store.TriggerAPI})
	equal(t, "a client's start with its token", f.trigger(start("tokened", &store.Trigger{Kind: store.TriggerAPI, TokenID: "tok-1"}).ID),
		store.Trigger{Kind: store.TriggerAPI, TokenID: "tok-1"})
	fire := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	got := f.trigger(start("sched", &store.Trigger{Kind: store.TriggerSchedule, ScheduleID: "nightly", FireAt: &fire}).ID)
	check(t, got.Kind == store.TriggerSchedule && got.ScheduleID == "nightly" && got.FireAt != nil && got.FireAt.Equal(fire),
		"a schedule's start: %+v", got)

	res, err := f.s.Broadcast(f.ctx, store.BroadcastParams{TenantID: f.tenant, Event: "order.paid", Payload: json.RawMessage(`{}`), EventID: "e-1",
		Start: []store.NewRun{{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest, Input: json.RawMessage(`{}`),
			IdempotencyKey: "event:order.paid:e-1", RetentionDays: 7,
			Trigger: &store.Trigger{Kind: store.TriggerEvent, Event: "order.paid", EventID: "e-1"}}}})
	ok(t, err)
	equal(t, "a trigger's start", f.trigger(res.Started[0].ID), store.Trigger{Kind: store.TriggerEvent, Event: "order.paid", EventID: "e-1"})
	sw, err := f.s.SignalWithStart(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
		Input: json.RawMessage(`{}`), IdempotencyKey: "sw", RetentionDays: 7, Trigger: &store.Trigger{Kind: store.TriggerSignalWithStart, Event: "go"}},
		store.SignalParams{Event: "go", Payload: json.RawMessage(`1`), MaxBuffered: 10})
	ok(t, err)
	equal(t, "a signal-with-start", f.trigger(sw.Run.ID), store.Trigger{Kind: store.TriggerSignalWithStart, Event: "go"})

	// Every run above is pending: claim them out of the way of the claims below.
	for _, c := range f.claimAll() {
		ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`0`), nil, nil))
	}
	lc, _ := f.leased("leased", store.LeaseTo{})
	equal(t, "a client's start run at once", f.trigger(lc.Run.ID), store.Trigger{Kind: store.TriggerAPI, Host: "here"})
	ok(t, f.s.Finish(f.ctx, lc.Lease, store.StatusCompleted, json.RawMessage(`0`), nil, nil))
	// The token is kept with the start; the host is read from the run, as without one.
	tc, _, err := f.s.CreateLeasedRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
		Input: json.RawMessage(`{"n":1}`), IdempotencyKey: "leased-tokened", RetentionDays: 7,
		Trigger: &store.Trigger{Kind: store.TriggerAPI, TokenID: "tok-2"}}, store.LeaseTo{Owner: "here", LeaseFor: longLease})
	ok(t, err)
	equal(t, "a client's start with its token run at once", f.trigger(tc.Run.ID), store.Trigger{Kind: store.TriggerAPI, Host: "here", TokenID: "tok-2"})
	ok(t, f.s.Finish(f.ctx, tc.Lease, store.StatusCompleted, json.RawMessage(`0`), nil, nil))

	parent, child := f.startAwaited()
	equal(t, "a child", f.trigger(child.ID), store.Trigger{Kind: store.TriggerParent, RunID: parent.ID, Key: "kid"})
	// The child's retry is its predecessor's successor (and its parent's child in its place).
	cc := f.claim(child.ID, longLease)
	retry, err := f.s.FinishAndContinue(f.ctx, cc.Lease, nil, store.StatusFailed, nil, &abi.ErrorInfo{Code: "boom", Message: "x"}, f.next(child, `{}`, 2), nil)
	ok(t, err)
	equal(t, "a retry", f.trigger(retry.ID), store.Trigger{Kind: store.TriggerRetry, RunID: child.ID})
	cr := f.claim(retry.ID, longLease)
	again, err := f.s.FinishAndContinue(f.ctx, cr.Lease, nil, store.StatusContinued, json.RawMessage(`1`), nil, f.next(retry, `{}`, 1), nil)
	ok(t, err)
	equal(t, "a continue-as-new", f.trigger(again.ID), store.Trigger{Kind: store.TriggerContinueAsNew, RunID: retry.ID})

	f.putModule(f.tenant, []byte("module-next"), false, wf("next", "v1"))
	f.hook(store.Hook{ID: "then", Workflow: wfName, When: []store.RunStatus{store.StatusCompleted}, StartWorkflow: "next"})
	f.end(again, `2`) // the parent, waiting, is made claimable: claim it with the hook's run below
	ds := f.deliveries(store.DeliveryFilter{RunID: again.ID})
	if len(ds) != 1 || ds[0].StartedRunID == "" {
		t.Fatalf("deliveries %+v, want the hook's start", ds)
	}
	equal(t, "a hook's start", f.trigger(ds[0].StartedRunID), store.Trigger{Kind: store.TriggerHook, RunID: again.ID, HookID: "then"})

	restarted, err := f.s.RestartRun(f.ctx, again.ID, 0, f.next(again, `{}`, 1))
	ok(t, err)
	equal(t, "a restart", f.trigger(restarted.ID), store.Trigger{Kind: store.TriggerRestart, RunID: again.ID})

	for _, id := range []string{"00000000-0000-0000-0000-000000000000", "not-a-uuid", "'; DROP TABLE runs; --", ""} {
		_, err := f.s.RunTrigger(f.ctx, f.tenant, id)
		wantErr(t, err, store.ErrNotFound)
	}
	_, err = f.s.RunTrigger(f.ctx, "another-tenant", parent.ID)
	wantErr(t, err, store.ErrNotFound)
}
