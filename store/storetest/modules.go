package storetest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var moduleTests = []test{
	{"PutGetList", testPutGetList},
	{"VersionConflict", testVersionConflict},
	{"ReplaceRebindsLiveRuns", testReplaceRebindsLiveRuns},
	{"ResolveLatest", testResolveLatest},
	{"ListWorkflows", testListWorkflows},
}

func testPutGetList(t *testing.T, f *fixture) {
	b := []byte("\x00asm second module")
	m := module(f.tenant, b)
	in := store.Workflow{TenantID: f.tenant, Name: "orders", Version: "2", Digest: m.Digest, RetentionDays: 30,
		Retry:    abi.RetryPolicy{Attempts: 5, Backoff: abi.BackoffLinear, BaseMs: 10, MaxMs: 100, Jitter: 0.5},
		Triggers: []string{"order.created", "order.updated"}}
	out, err := f.s.PutModule(f.ctx, m, []store.Workflow{in}, false)
	ok(t, err)
	equal(t, "stored workflows", len(out), 1)
	got := out[0]
	equal(t, "workflow name", got.Name, in.Name)
	equal(t, "workflow version", got.Version, in.Version)
	equal(t, "workflow digest", got.Digest, m.Digest)
	equal(t, "workflow tenant", got.TenantID, f.tenant)
	equal(t, "workflow retention", got.RetentionDays, 30)
	equal(t, "workflow retry", got.Retry, in.Retry)
	check(t, slices.Equal(got.Triggers, in.Triggers), "workflow triggers: got %v, want %v", got.Triggers, in.Triggers)
	check(t, !got.CreatedAt.IsZero(), "workflow created at is zero")

	stored, err := f.s.GetModule(f.ctx, f.tenant, m.Digest)
	ok(t, err)
	sameBytes(t, "module bytes", stored.Bytes, b)
	equal(t, "module size", stored.Size, len(b))
	equal(t, "module abi version", stored.ABIVersion, abi.Version)
	equal(t, "module digest", stored.Digest, m.Digest)
	equal(t, "module tenant", stored.TenantID, f.tenant)
	check(t, !stored.CreatedAt.IsZero(), "module created at is zero")

	// Putting the same module again changes nothing.
	_, err = f.s.PutModule(f.ctx, m, []store.Workflow{in}, false)
	ok(t, err)
	list, err := f.s.ListModules(f.ctx, f.tenant)
	ok(t, err)
	equal(t, "modules listed", len(list), 2)
	equal(t, "newest module first", list[0].Digest, m.Digest)
	equal(t, "older module second", list[1].Digest, f.digest)
	for _, lm := range list {
		check(t, lm.Bytes == nil, "ListModules returned bytes for %s", lm.Digest)
		check(t, lm.Size > 0, "ListModules lost the size of %s", lm.Digest)
	}

	_, err = f.s.GetModule(f.ctx, f.tenant, module(f.tenant, []byte("never stored")).Digest)
	wantErr(t, err, store.ErrNotFound)
}

func testVersionConflict(t *testing.T, f *fixture) {
	other := module(f.tenant, []byte("module-v1 with other code"))
	decl := wf(wfName, "v1")
	decl.TenantID, decl.Digest = f.tenant, other.Digest
	_, err := f.s.PutModule(f.ctx, other, []store.Workflow{wf("fresh", "v1"), decl}, false)
	wantErr(t, err, store.ErrConflict)

	// Nothing of the refused deploy is kept.
	_, err = f.s.GetModule(f.ctx, f.tenant, other.Digest)
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.ResolveWorkflow(f.ctx, f.tenant, "fresh", "")
	wantErr(t, err, store.ErrNotFound)
	w, err := f.s.ResolveWorkflow(f.ctx, f.tenant, wfName, "v1")
	ok(t, err)
	equal(t, "binding after a refused deploy", w.Digest, f.digest)
}

func testReplaceRebindsLiveRuns(t *testing.T, f *fixture) {
	completed := f.run()
	c := f.claim(completed.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))

	stuck := f.run()
	c = f.claim(stuck.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusNondeterministic, nil, &abi.ErrorInfo{Code: abi.CodeNondeterministic, Message: "step 0 differs"}, nil))

	sleeping := f.run()
	c = f.claim(sleeping.ID, longLease)
	wake := f.now().Add(time.Hour)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, &wake))

	pending := f.run()
	otherVersion := f.putModule(f.tenant, []byte("v2 code"), false, wf(wfName, "v2"))
	v2run := f.runOf(f.tenant, wfName, "v2", otherVersion.Digest, "")

	hotfix := module(f.tenant, []byte("module-v1 hotfix"))
	decl := wf(wfName, "v1")
	decl.TenantID, decl.Digest = f.tenant, hotfix.Digest
	out, err := f.s.PutModule(f.ctx, hotfix, []store.Workflow{decl}, true)
	ok(t, err)
	equal(t, "rebound digest", out[0].Digest, hotfix.Digest)

	for id, status := range map[string]store.RunStatus{stuck.ID: store.StatusRunning, sleeping.ID: store.StatusRunning, pending.ID: store.StatusPending} {
		r := f.getRun(id)
		equal(t, "digest of live run "+id, r.Digest, hotfix.Digest)
		equal(t, "status of live run "+id, r.Status, status)
		check(t, r.Error == nil, "a rebound run keeps its error %+v", r.Error)
		check(t, r.AvailableAt != nil && !r.AvailableAt.After(f.now().Add(time.Second)), "rebound run %s is not available now: %v", id, r.AvailableAt)
	}
	equal(t, "terminal runs keep their digest", f.getRun(completed.ID).Digest, f.digest)
	equal(t, "terminal runs keep their status", f.getRun(completed.ID).Status, store.StatusCompleted)
	equal(t, "other versions keep their digest", f.getRun(v2run.ID).Digest, otherVersion.Digest)

	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	got := claimIDs(claims)
	slices.Sort(got)
	want := []string{stuck.ID, sleeping.ID, pending.ID, v2run.ID}
	slices.Sort(want)
	check(t, slices.Equal(got, want), "claimable after the hotfix: got %v, want %v", got, want)
}

func testResolveLatest(t *testing.T, f *fixture) {
	w, err := f.s.ResolveWorkflow(f.ctx, f.tenant, wfName, "")
	ok(t, err)
	equal(t, "only version", w.Version, "v1")

	m2 := f.putModule(f.tenant, []byte("module-v2"), false, wf(wfName, "v2"))
	w, err = f.s.ResolveWorkflow(f.ctx, f.tenant, wfName, "")
	ok(t, err)
	equal(t, "latest version", w.Version, "v2")
	equal(t, "latest digest", w.Digest, m2.Digest)

	w, err = f.s.ResolveWorkflow(f.ctx, f.tenant, wfName, "v1")
	ok(t, err)
	equal(t, "explicit version", w.Version, "v1")
	equal(t, "explicit digest", w.Digest, f.digest)

	// Rebinding v1 makes it the most recently bound version.
	m3 := f.putModule(f.tenant, []byte("module-v1 hotfix"), true, wf(wfName, "v1"))
	w, err = f.s.ResolveWorkflow(f.ctx, f.tenant, wfName, "")
	ok(t, err)
	equal(t, "latest after a rebind", w.Version, "v1")
	equal(t, "latest digest after a rebind", w.Digest, m3.Digest)

	_, err = f.s.ResolveWorkflow(f.ctx, f.tenant, wfName, "v9")
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.ResolveWorkflow(f.ctx, f.tenant, "nope", "")
	wantErr(t, err, store.ErrNotFound)
}

func testListWorkflows(t *testing.T, f *fixture) {
	f.putModule(f.tenant, []byte("module-v2"), false, wf(wfName, "v2"), wf("idle", "1"))
	done := f.run()
	c := f.claim(done.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, nil, nil, nil))
	f.run()
	f.run()

	list, err := f.s.ListWorkflows(f.ctx, f.tenant)
	ok(t, err)
	equal(t, "workflow names", len(list), 2)
	byName := map[string]store.WorkflowSummary{}
	for _, w := range list {
		byName[w.Name] = w
	}
	main, idle := byName[wfName], byName["idle"]
	equal(t, "latest version", main.LatestVersion, "v2")
	check(t, slices.Equal(main.Versions, []string{"v1", "v2"}), "versions in binding order: got %v", main.Versions)
	equal(t, "pending runs", main.RunCounts[store.StatusPending], 2)
	equal(t, "completed runs", main.RunCounts[store.StatusCompleted], 1)
	equal(t, "idle latest version", idle.LatestVersion, "1")
	equal(t, "idle runs", len(idle.RunCounts), 0)
}
