package storetest

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var hookTests = []test{
	{"CRUD", testHookCRUD},
	{"StartHookStartsOnce", testStartHook},
	{"ReachesRunsOpenWhenSet", testHookReachesOpenRuns},
	{"StartObeysTheFlowOfItsWorkflow", testStartHookUnderFlow},
	{"UnknownWorkflowIsAFailedDelivery", testStartHookUnknownWorkflow},
	{"ChainIsBounded", testHookChainBounded},
	{"ContinuedRunFiresNothing", testHookContinued},
	{"WebhookOutbox", testWebhookOutbox},
	{"ClaimsNeverShareADelivery", testDeliveryClaimRace},
	{"OutboxCounted", testOutboxCounted},
	{"SigningSecret", testHookSecret},
	{"ModuleHooks", testModuleHooks},
	{"SweptWithTheRun", testDeliveriesSwept},
}

// hook puts a tenant hook and fails the test on error.
func (f *fixture) hook(h store.Hook) store.Hook {
	f.t.Helper()
	h.TenantID = f.tenant
	out, _, err := f.s.PutHook(f.ctx, h)
	ok(f.t, err)
	return out
}

// end claims run r and finishes it completed with output.
func (f *fixture) end(r store.Run, output string) {
	f.t.Helper()
	c := f.claim(r.ID, longLease)
	ok(f.t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(output), nil, nil))
}

func (f *fixture) deliveries(filter store.DeliveryFilter) []store.HookDelivery {
	f.t.Helper()
	ds, err := f.s.ListDeliveries(f.ctx, f.tenant, filter)
	ok(f.t, err)
	return ds
}

// Tenant hooks are created, replaced, listed and deleted; a hook of an unknown tenant and
// the deletion of an unknown hook are not found.
func testHookCRUD(t *testing.T, f *fixture) {
	h, created, err := f.s.PutHook(f.ctx, store.Hook{TenantID: f.tenant, ID: "notify", When: []store.RunStatus{store.StatusFailed},
		URL: "https://hooks.example.com/x"})
	ok(t, err)
	check(t, created, "the first put creates")
	equal(t, "source", h.Source, store.HookSourceTenant)
	h, created, err = f.s.PutHook(f.ctx, store.Hook{TenantID: f.tenant, ID: "notify", Workflow: wfName,
		When: []store.RunStatus{store.StatusCompleted, store.StatusCancelled}, StartWorkflow: "next"})
	ok(t, err)
	check(t, !created, "a second put replaces")
	equal(t, "replaced target", h.StartWorkflow, "next")
	equal(t, "replaced url", h.URL, "")
	hooks, err := f.s.ListHooks(f.ctx, f.tenant)
	ok(t, err)
	check(t, len(hooks) == 1 && hooks[0].Workflow == wfName && len(hooks[0].When) == 2, "listed %+v", hooks)
	_, _, err = f.s.PutHook(f.ctx, store.Hook{TenantID: "no-such-tenant", ID: "x", When: []store.RunStatus{store.StatusFailed}, URL: "https://a.example"})
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, f.s.DeleteHook(f.ctx, f.tenant, "nope"), store.ErrNotFound)
	ok(t, f.s.DeleteHook(f.ctx, f.tenant, "notify"))
	hooks, err = f.s.ListHooks(f.ctx, f.tenant)
	ok(t, err)
	equal(t, "hooks after delete", len(hooks), 0)
}

// A start hook creates its run in the ended run's transaction, keyed by the ended run and
// the hook, with the ended run as input, and records the delivery with the run it started.
func testStartHook(t *testing.T, f *fixture) {
	f.putModule(f.tenant, []byte("module-next"), false, wf("next", "v1"))
	f.hook(store.Hook{ID: "then", Workflow: wfName, When: []store.RunStatus{store.StatusCompleted}, StartWorkflow: "next"})
	r := f.run()
	f.end(r, `{"total":3}`)
	ended := f.getRun(r.ID)
	equal(t, "the ended run's status", ended.Status, store.StatusCompleted)
	equalJSON(t, "the ended run's output", ended.Output, `{"total":3}`)

	ds := f.deliveries(store.DeliveryFilter{RunID: r.ID})
	if len(ds) != 1 {
		t.Fatalf("deliveries %+v, want one", ds)
	}
	d := ds[0]
	equal(t, "kind", d.Kind, store.HookKindStart)
	equal(t, "status", d.Status, store.DeliveryDelivered)
	equal(t, "depth", d.Depth, 1)
	started := f.getRun(d.StartedRunID)
	equal(t, "started workflow", started.Workflow, "next")
	equal(t, "started status", started.Status, store.StatusPending)
	equal(t, "started key", started.IdempotencyKey, "hook:"+r.ID+":then")
	var in map[string]json.RawMessage
	ok(t, json.Unmarshal(started.Input, &in))
	equalJSON(t, "input runId", in["runId"], `"`+r.ID+`"`)
	equalJSON(t, "input status", in["status"], `"completed"`)
	equalJSON(t, "input output", in["output"], `{"total":3}`)
	by := f.deliveries(store.DeliveryFilter{StartedRunID: started.ID})
	check(t, len(by) == 1 && by[0].RunID == r.ID, "the started run's triggeredBy: %+v", by)

	// Only the hooked status fires: a failed run of the same workflow starts nothing (and a
	// run of the started workflow, which has no hook, nothing either).
	f.end(started, `null`)
	equal(t, "deliveries of the started run", len(f.deliveries(store.DeliveryFilter{RunID: started.ID})), 0)
	r2 := f.run()
	c := f.claim(r2.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusFailed, nil, &abi.ErrorInfo{Code: "boom", Message: "x"}, nil))
	equal(t, "deliveries of a failed run", len(f.deliveries(store.DeliveryFilter{RunID: r2.ID})), 0)
}

// A hook reaches every run that ends after it is set: runs created before it, one running
// (leased) and one pending, each fire it exactly once when they end, and setting it again
// changes nothing for them. A run of a workflow the hook does not name writes nothing.
func testHookReachesOpenRuns(t *testing.T, f *fixture) {
	m := f.putModule(f.tenant, []byte("module-next"), false, wf("next", "v1"), wf("other", "v1"))
	running := f.run()
	cr := f.claim(running.ID, longLease)
	other := f.runOf(f.tenant, "other", "v1", m.Digest, "")
	co := f.claim(other.ID, longLease)
	pending := f.run()
	h := store.Hook{ID: "then", Workflow: wfName, When: []store.RunStatus{store.StatusCompleted}, StartWorkflow: "next"}
	f.hook(h)
	f.hook(h) // set again: the runs it marked stay marked once
	f.end(pending, `2`)
	ok(t, f.s.Finish(f.ctx, cr.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	ok(t, f.s.Finish(f.ctx, co.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	for _, r := range []store.Run{running, pending} {
		ds := f.deliveries(store.DeliveryFilter{RunID: r.ID})
		if len(ds) != 1 || ds[0].Status != store.DeliveryDelivered || ds[0].StartedRunID == "" {
			t.Fatalf("deliveries of run %s, created before the hook: %+v, want one delivered start", r.ID, ds)
		}
		equal(t, "the started run's key", f.getRun(ds[0].StartedRunID).IdempotencyKey, "hook:"+r.ID+":then")
	}
	equal(t, "deliveries of a run the hook does not name", len(f.deliveries(store.DeliveryFilter{RunID: other.ID})), 0)
	equal(t, "deliveries in all", len(f.deliveries(store.DeliveryFilter{})), 2)
}

// A start hook whose workflow does not exist is recorded failed; the run is unchanged.
func testStartHookUnknownWorkflow(t *testing.T, f *fixture) {
	f.hook(store.Hook{ID: "ghost", When: []store.RunStatus{store.StatusCompleted}, StartWorkflow: "nowhere"})
	r := f.run()
	f.end(r, `"fine"`)
	equal(t, "the run's status", f.getRun(r.ID).Status, store.StatusCompleted)
	ds := f.deliveries(store.DeliveryFilter{RunID: r.ID})
	if len(ds) != 1 {
		t.Fatalf("deliveries %+v, want one", ds)
	}
	equal(t, "status", ds[0].Status, store.DeliveryFailed)
	check(t, strings.HasPrefix(ds[0].LastError, "workflow_not_found"), "last error %q", ds[0].LastError)
	equal(t, "started run", ds[0].StartedRunID, "")
}

// A hook that starts its own workflow ends at MaxHookChainDepth instead of looping forever.
func testHookChainBounded(t *testing.T, f *fixture) {
	f.hook(store.Hook{ID: "again", Workflow: wfName, When: []store.RunStatus{store.StatusCompleted}, StartWorkflow: wfName})
	r := f.run()
	for depth := 1; ; depth++ {
		f.end(r, `1`)
		ds := f.deliveries(store.DeliveryFilter{RunID: r.ID})
		if len(ds) != 1 {
			t.Fatalf("depth %d: deliveries %+v, want one", depth, ds)
		}
		equal(t, "depth", ds[0].Depth, depth)
		if depth > store.MaxHookChainDepth {
			equal(t, "status past the bound", ds[0].Status, store.DeliveryFailed)
			check(t, strings.HasPrefix(ds[0].LastError, "hook_chain_too_deep"), "last error %q", ds[0].LastError)
			f.noClaim()
			return
		}
		equal(t, "status", ds[0].Status, store.DeliveryDelivered)
		r = f.getRun(ds[0].StartedRunID)
	}
}

// A run that ends by handing on (a retry, continue-as-new) fires nothing: its chain goes on.
func testHookContinued(t *testing.T, f *fixture) {
	f.hook(store.Hook{ID: "w", When: []store.RunStatus{store.StatusFailed, store.StatusCompleted}, URL: "https://hooks.example.com/"})
	r := f.run()
	c := f.claim(r.ID, longLease)
	next, err := f.s.FinishAndContinue(f.ctx, c.Lease, nil, store.StatusFailed, nil, &abi.ErrorInfo{Code: "x", Message: "y"}, f.next(r, `{}`, 2), nil)
	ok(t, err)
	equal(t, "deliveries of the retried run", len(f.deliveries(store.DeliveryFilter{RunID: r.ID})), 0)
	f.end(next, `2`)
	equal(t, "deliveries of the chain's last run", len(f.deliveries(store.DeliveryFilter{RunID: next.ID})), 1)
}

// A webhook is a pending outbox row written by the end (a cancel here); a claim leases it
// and counts the attempt; an outcome is recorded only by the claim that holds it; a retry
// comes back due; a delivered row keeps its attempts.
func testWebhookOutbox(t *testing.T, f *fixture) {
	f.hook(store.Hook{ID: "w", When: []store.RunStatus{store.StatusCancelled}, URL: "https://hooks.example.com/in"})
	r := f.run()
	_, err := f.s.CancelRun(f.ctx, f.tenant, r.ID)
	ok(t, err)
	equal(t, "the run's status", f.getRun(r.ID).Status, store.StatusCancelled)
	ds := f.deliveries(store.DeliveryFilter{RunID: r.ID})
	if len(ds) != 1 || ds[0].Status != store.DeliveryPending || ds[0].Kind != store.HookKindWebhook {
		t.Fatalf("deliveries %+v, want one pending webhook", ds)
	}
	var body map[string]json.RawMessage
	ok(t, json.Unmarshal(ds[0].Payload, &body))
	equalJSON(t, "body status", body["status"], `"cancelled"`)
	equalJSON(t, "body hook", body["hook"], `"w"`)
	_, due, err := f.s.NextDeliveryDue(f.ctx)
	ok(t, err)
	check(t, due, "a pending delivery is due")

	a, err := f.s.ClaimDeliveries(f.ctx, "a", time.Minute, 10)
	ok(t, err)
	if len(a) != 1 || a[0].Attempts != 1 || a[0].Target != "https://hooks.example.com/in" {
		t.Fatalf("claimed %+v, want the delivery at attempt 1", a)
	}
	b, err := f.s.ClaimDeliveries(f.ctx, "b", time.Minute, 10)
	ok(t, err)
	equal(t, "claimed by another while leased", len(b), 0)
	fail := store.DeliveryOutcome{Attempt: store.HookAttempt{At: f.now(), Status: 500, Error: "http_status: 500"}, RetryAt: ptr(f.now())}
	got, err := f.s.EndDeliveryAttempt(f.ctx, a[0].ID, "b", 1, fail)
	ok(t, err)
	check(t, !got, "an outcome from a dispatcher that holds nothing is refused")
	got, err = f.s.EndDeliveryAttempt(f.ctx, a[0].ID, "a", 1, fail)
	ok(t, err)
	check(t, got, "the holder's outcome is recorded")
	f.pass(time.Millisecond)
	a, err = f.s.ClaimDeliveries(f.ctx, "a", time.Minute, 10)
	ok(t, err)
	if len(a) != 1 || a[0].Attempts != 2 || a[0].LastError != "http_status: 500" {
		t.Fatalf("claimed again %+v, want attempt 2 after the 500", a)
	}
	got, err = f.s.EndDeliveryAttempt(f.ctx, a[0].ID, "a", 2, store.DeliveryOutcome{Attempt: store.HookAttempt{At: f.now(), Status: 204}, Delivered: true})
	ok(t, err)
	check(t, got, "delivered")
	ds = f.deliveries(store.DeliveryFilter{RunID: r.ID, Status: store.DeliveryDelivered})
	if len(ds) != 1 || len(ds[0].AttemptLog) != 2 || ds[0].AttemptLog[0].Status != 500 || ds[0].AttemptLog[1].Status != 204 || ds[0].LastError != "" {
		t.Fatalf("delivered %+v, want two attempts logged", ds)
	}
	a, err = f.s.ClaimDeliveries(f.ctx, "a", time.Minute, 10)
	ok(t, err)
	equal(t, "claimed after delivery", len(a), 0)
	// Spent attempts: a nil RetryAt fails the delivery.
	r2 := f.run()
	_, err = f.s.CancelRun(f.ctx, f.tenant, r2.ID)
	ok(t, err)
	a, err = f.s.ClaimDeliveries(f.ctx, "a", time.Minute, 10)
	ok(t, err)
	check(t, len(a) == 1, "claimed %+v", a)
	_, err = f.s.EndDeliveryAttempt(f.ctx, a[0].ID, "a", 1, store.DeliveryOutcome{Attempt: store.HookAttempt{At: f.now(), Error: "http_denied: no"}})
	ok(t, err)
	ds = f.deliveries(store.DeliveryFilter{RunID: r2.ID})
	check(t, len(ds) == 1 && ds[0].Status == store.DeliveryFailed && ds[0].LastError == "http_denied: no", "failed %+v", ds)
}

// pendingOf is the tenant's part of CountPendingDeliveries (zero when it has none).
func (f *fixture) pendingOf() store.PendingDeliveries {
	f.t.Helper()
	all, err := f.s.CountPendingDeliveries(f.ctx)
	ok(f.t, err)
	for _, p := range all {
		check(f.t, p.Pending > 0, "a tenant listed with no pending delivery: %+v", p)
		if p.TenantID == f.tenant {
			return p
		}
	}
	return store.PendingDeliveries{}
}

// The outbox's count holds the pending webhooks only, and its earliest due time is the
// earliest of their next attempts and leases' ends: a delivered or failed one leaves it.
func testOutboxCounted(t *testing.T, f *fixture) {
	f.hook(store.Hook{ID: "w", When: []store.RunStatus{store.StatusCancelled}, URL: "https://hooks.example.com/in"})
	equal(t, "pending before any end", f.pendingOf().Pending, 0)
	for range 2 {
		_, err := f.s.CancelRun(f.ctx, f.tenant, f.run().ID)
		ok(t, err)
	}
	p := f.pendingOf()
	equal(t, "pending", p.Pending, 2)
	check(t, !p.EarliestDue.IsZero() && !p.EarliestDue.After(f.now().Add(time.Second)), "earliest due %v, want about now (%v)", p.EarliestDue, f.now())

	a, err := f.s.ClaimDeliveries(f.ctx, "a", time.Hour, 2)
	ok(t, err)
	check(t, len(a) == 2, "claimed %+v", a)
	p = f.pendingOf()
	equal(t, "pending while leased", p.Pending, 2)
	check(t, p.EarliestDue.After(f.now().Add(50*time.Minute)), "earliest due %v while both are leased for an hour, want the lease's end", p.EarliestDue)

	_, err = f.s.EndDeliveryAttempt(f.ctx, a[0].ID, "a", 1, store.DeliveryOutcome{Attempt: store.HookAttempt{At: f.now(), Status: 200}, Delivered: true})
	ok(t, err)
	equal(t, "pending after one delivered", f.pendingOf().Pending, 1)
	_, err = f.s.EndDeliveryAttempt(f.ctx, a[1].ID, "a", 1, store.DeliveryOutcome{Attempt: store.HookAttempt{At: f.now(), Error: "http_denied: no"}})
	ok(t, err)
	equal(t, "pending after the other failed", f.pendingOf().Pending, 0)
}

// Dispatchers claiming at once never hold one delivery together.
func testDeliveryClaimRace(t *testing.T, f *fixture) {
	f.hook(store.Hook{ID: "w", When: []store.RunStatus{store.StatusCancelled}, URL: "https://hooks.example.com/in"})
	const runs = 20
	for range runs {
		r := f.run()
		_, err := f.s.CancelRun(f.ctx, f.tenant, r.ID)
		ok(t, err)
	}
	var (
		mu   sync.Mutex
		seen = map[string]string{}
		wg   sync.WaitGroup
	)
	for i := range 4 {
		owner := string(rune('a' + i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				ds, err := f.s.ClaimDeliveries(f.ctx, owner, time.Hour, 3)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, d := range ds {
					if prev, dup := seen[d.ID]; dup {
						t.Errorf("delivery %s claimed by %s and %s", d.ID, prev, owner)
					}
					seen[d.ID] = owner
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	equal(t, "deliveries claimed", len(seen), runs)
}

// The signing secret is stored once, read back, and replaced by a rotation.
func testHookSecret(t *testing.T, f *fixture) {
	_, _, err := f.s.HookSecret(f.ctx, f.tenant, nil)
	wantErr(t, err, store.ErrNotFound)
	s1, created, err := f.s.HookSecret(f.ctx, f.tenant, []byte("first-secret"))
	ok(t, err)
	check(t, created && string(s1) == "first-secret", "created %v %q", created, s1)
	s2, created, err := f.s.HookSecret(f.ctx, f.tenant, []byte("second"))
	ok(t, err)
	check(t, !created && string(s2) == "first-secret", "kept %v %q", created, s2)
	ok(t, f.s.RotateHookSecret(f.ctx, f.tenant, []byte("rotated")))
	s3, _, err := f.s.HookSecret(f.ctx, f.tenant, nil)
	ok(t, err)
	sameBytes(t, "rotated secret", s3, []byte("rotated"))

	// The compare-and-set the engine seals and rewraps with: it replaces the value it read,
	// keeps the row's creation time, and loses to a rotation in between.
	replaced, err := f.s.ReplaceHookSecret(f.ctx, f.tenant, []byte("rotated"), []byte("rotated, sealed"))
	ok(t, err)
	check(t, replaced, "replace the value read: not replaced")
	s4, _, err := f.s.HookSecret(f.ctx, f.tenant, nil)
	ok(t, err)
	sameBytes(t, "replaced secret", s4, []byte("rotated, sealed"))
	replaced, err = f.s.ReplaceHookSecret(f.ctx, f.tenant, []byte("rotated"), []byte("stale"))
	ok(t, err)
	check(t, !replaced, "a replace of a value no longer stored went through")
	replaced, err = f.s.ReplaceHookSecret(f.ctx, "no-such-tenant", []byte("rotated, sealed"), []byte("x"))
	ok(t, err)
	check(t, !replaced, "a replace for a tenant with no secret went through")
	s5, _, err := f.s.HookSecret(f.ctx, f.tenant, nil)
	ok(t, err)
	sameBytes(t, "secret after refused replaces", s5, []byte("rotated, sealed"))
}

// A workflow version's onEnd is kept as module hooks, bound and replaced with the version;
// neither the API's put nor its delete reaches them.
func testModuleHooks(t *testing.T, f *fixture) {
	f.putModule(f.tenant, []byte("module-next"), false, wf("next", "v1"))
	hooked := wf("hooked", "v1")
	hooked.OnEnd = []abi.Hook{
		{When: []string{"completed"}, Start: &abi.HookStart{Workflow: "next"}},
		{When: []string{"failed"}, Webhook: "https://hooks.example.com/m"},
	}
	m := f.putModule(f.tenant, []byte("module-hooked"), false, hooked)
	hooks, err := f.s.ListHooks(f.ctx, f.tenant)
	ok(t, err)
	if len(hooks) != 2 || hooks[0].Source != store.HookSourceModule || hooks[0].ID != store.ModuleHookID("hooked", "v1", 0) ||
		hooks[0].StartWorkflow != "next" || hooks[1].URL != "https://hooks.example.com/m" {
		t.Fatalf("module hooks %+v", hooks)
	}
	wantErr(t, f.s.DeleteHook(f.ctx, f.tenant, hooks[0].ID), store.ErrNotFound)
	_, _, err = f.s.PutHook(f.ctx, store.Hook{TenantID: f.tenant, ID: hooks[0].ID, When: []store.RunStatus{store.StatusFailed}, URL: "https://x.example"})
	wantErr(t, err, store.ErrConflict)

	r := f.runOf(f.tenant, "hooked", "v1", m.Digest, "")
	f.end(r, `7`)
	ds := f.deliveries(store.DeliveryFilter{RunID: r.ID})
	check(t, len(ds) == 1 && ds[0].Kind == store.HookKindStart && ds[0].Status == store.DeliveryDelivered, "deliveries %+v", ds)

	// The same version rebound without onEnd has no hooks left.
	plain := wf("hooked", "v1")
	f.putModule(f.tenant, []byte("module-hooked-2"), true, plain)
	hooks, err = f.s.ListHooks(f.ctx, f.tenant)
	ok(t, err)
	equal(t, "hooks after a rebind without onEnd", len(hooks), 0)
}

// A run's deliveries go with it when retention sweeps it; a pending webhook is no reason to
// keep the run.
func testDeliveriesSwept(t *testing.T, f *fixture) {
	f.hook(store.Hook{ID: "w", When: []store.RunStatus{store.StatusCompleted}, URL: "https://hooks.example.com/"})
	r, _, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
		Input: json.RawMessage(`{}`), RetentionDays: 0})
	ok(t, err)
	f.end(r, `1`)
	equal(t, "deliveries before the sweep", len(f.deliveries(store.DeliveryFilter{RunID: r.ID})), 1)
	f.pass(2 * time.Millisecond)
	n, err := f.s.SweepExpired(f.ctx, 100)
	ok(t, err)
	equal(t, "swept", n, 1)
	equal(t, "deliveries after the sweep", len(f.deliveries(store.DeliveryFilter{})), 0)
	ds, err := f.s.ClaimDeliveries(f.ctx, "a", time.Minute, 10)
	ok(t, err)
	equal(t, "claimable after the sweep", len(ds), 0)
}

// dispatchStarts does what the engine's dispatcher does with the due start deliveries (a
// store may leave a start under flow control to it): StartHookDelivery each.
func (f *fixture) dispatchStarts() {
	f.t.Helper()
	ds, err := f.s.ClaimDeliveries(f.ctx, "dispatcher", longLease, 100)
	ok(f.t, err)
	for _, d := range ds {
		if d.Kind != store.HookKindStart {
			continue
		}
		started, err := f.s.StartHookDelivery(f.ctx, d.ID, "dispatcher", d.Attempts)
		ok(f.t, err)
		check(f.t, started, "the dispatcher's own start delivery %s was not started", d.ID)
		again, err := f.s.StartHookDelivery(f.ctx, d.ID, "dispatcher", d.Attempts)
		ok(f.t, err)
		check(f.t, !again, "a start delivery was started twice")
	}
}

// A start hook's run obeys its workflow's flow control: past the key's limit it is held, as a
// client's start would be, and made once; a hook whose input names no key of its workflow is
// a failed delivery, and the ended run is unchanged.
func testStartHookUnderFlow(t *testing.T, f *fixture) {
	f.flowWorkflow("hf", abi.Flow{Concurrency: &abi.FlowConcurrency{Key: "$.workflow", Limit: 1}})
	f.flowWorkflow("hg", abi.Flow{Concurrency: &abi.FlowConcurrency{Key: "$.no.such.field", Limit: 1}})
	first, _ := startFlow(t, f, f.s, "hf", `{"workflow":"`+wfName+`"}`, nil)
	f.claim(first.ID, longLease) // holds key wfName's one slot
	f.hook(store.Hook{ID: "then", Workflow: wfName, When: []store.RunStatus{store.StatusCompleted}, StartWorkflow: "hf"})
	f.hook(store.Hook{ID: "nokey", Workflow: wfName, When: []store.RunStatus{store.StatusCompleted}, StartWorkflow: "hg"})
	r := f.run()
	f.end(r, `1`)
	f.dispatchStarts()
	byHook := map[string]store.HookDelivery{}
	for _, d := range f.deliveries(store.DeliveryFilter{RunID: r.ID}) {
		byHook[d.HookID] = d
	}
	then, nokey := byHook["then"], byHook["nokey"]
	equal(t, "the start's status", then.Status, store.DeliveryDelivered)
	started := f.getRun(then.StartedRunID)
	equal(t, "the started run's key", started.IdempotencyKey, "hook:"+r.ID+":then")
	check(t, started.AvailableAt == nil && f.flowOf(started.ID).Concurrency.Held, "a hook's start is claimable past its key's limit: %+v", started)
	f.noClaim()
	equal(t, "a start whose input names no key", nokey.Status, store.DeliveryFailed)
	check(t, nokey.StartedRunID == "" && strings.Contains(nokey.LastError, "flow_key"), "the failed start: %+v", nokey)
	equal(t, "the ended run", f.getRun(r.ID).Status, store.StatusCompleted)
	// A delivery not held, unknown, malformed or hostile starts nothing.
	for _, id := range []string{then.ID, "00000000-0000-0000-0000-000000000000", "not-a-uuid", "'; DROP TABLE runs; --", ""} {
		started, err := f.s.StartHookDelivery(f.ctx, id, "dispatcher", 1)
		ok(t, err)
		check(t, !started, "StartHookDelivery(%q) started a run", id)
	}
}
