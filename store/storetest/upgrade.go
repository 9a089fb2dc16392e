package storetest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var upgradeTests = []test{
	{"ListOpenRunsPages", testListOpenRunsPages},
	{"UpgradeModuleMovesWhatWasChecked", testUpgradeModuleMoves},
	{"UpgradeToANewVersion", testUpgradeToNewVersion},
	{"UpgradeReports", testUpgradeReports},
}

// openRuns makes runs of wfName v1 at different points: completed, nondeterministic, sleeping
// after two steps, pending, and held (leased, one step in).
type openRuns struct {
	completed, stuck, sleeping, pending, held store.Run
	heldLease                                 store.Lease
}

func (f *fixture) openRuns() openRuns {
	f.t.Helper()
	var o openRuns
	o.completed = f.run()
	c := f.claim(o.completed.ID, longLease)
	ok(f.t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))

	o.stuck = f.run()
	c = f.claim(o.stuck.ID, longLease)
	ok(f.t, f.s.Finish(f.ctx, c.Lease, store.StatusNondeterministic, nil, &abi.ErrorInfo{Code: abi.CodeNondeterministic, Message: "step 0 differs"}, nil))

	o.sleeping = f.run()
	c = f.claim(o.sleeping.ID, longLease)
	ok(f.t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(o.sleeping.ID, 0, "a"), longLease))
	ok(f.t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(o.sleeping.ID, 1, "b"), longLease))
	ok(f.t, f.s.Suspend(f.ctx, c.Lease, nil, ptr(f.now().Add(time.Hour))))

	o.held = f.run()
	c = f.claim(o.held.ID, longLease)
	ok(f.t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(o.held.ID, 0, "a"), longLease))
	o.heldLease = c.Lease

	o.pending = f.run()
	return o
}

// listOpen pages through the open runs of wfName not on except, limit at a time.
func (f *fixture) listOpen(except string, limit int) []store.OpenRun {
	f.t.Helper()
	var all []store.OpenRun
	after := ""
	for {
		page, err := f.s.ListOpenRuns(f.ctx, store.OpenRunsQuery{TenantID: f.tenant, Workflow: wfName, Except: except, After: after, Limit: limit})
		ok(f.t, err)
		all = append(all, page...)
		if len(page) < limit {
			return all
		}
		after = page[len(page)-1].Run.ID
	}
}

func testListOpenRunsPages(t *testing.T, f *fixture) {
	o := f.openRuns()
	other := f.putModule(f.tenant, []byte("v2 code"), false, wf(wfName, "v2"))
	f.runOf(f.tenant, wfName, "v2", other.Digest, "") // on the module left out
	f.runOf(f.tenant, "another", "v1", f.digest, "")  // another workflow

	all := f.listOpen(other.Digest, 2)
	var ids []string
	for _, r := range all {
		ids = append(ids, r.Run.ID)
	}
	want := []string{o.stuck.ID, o.sleeping.ID, o.held.ID, o.pending.ID}
	slices.Sort(want)
	check(t, slices.Equal(ids, want), "open runs: got %v, want %v (by id)", ids, want)
	for _, r := range all {
		want := map[string]int{o.sleeping.ID: 2, o.held.ID: 1}[r.Run.ID]
		equal(t, "journal length of "+r.Run.ID, len(r.Journal), want)
		for i, s := range r.Journal {
			equal(t, "journal seq", s.Seq, i)
		}
		equalJSON(t, "input", r.Run.Input, `{"n":1}`)
	}
	equal(t, "every run when none is left out", len(f.listOpen("", 100)), 5)

	// Another tenant sees none of them.
	page, err := f.s.ListOpenRuns(f.ctx, store.OpenRunsQuery{TenantID: "tenant-none", Workflow: wfName, Limit: 10})
	ok(t, err)
	equal(t, "another tenant's open runs", len(page), 0)
}

func testUpgradeModuleMoves(t *testing.T, f *fixture) {
	stale := f.run() // checked with no entries, then it journals one
	c := f.claim(stale.ID, longLease)
	ok(t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(stale.ID, 0, "a"), longLease))
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, nil))
	o := f.openRuns()

	hotfix := module(f.tenant, []byte("module-v1 hotfix"))
	decl := wf(wfName, "v1")
	decl.TenantID, decl.Digest = f.tenant, hotfix.Digest
	before := f.getRun(o.sleeping.ID)
	moves := []store.RunMove{
		{RunID: o.stuck.ID, From: f.digest, Entries: 0, Version: "v1"},
		{RunID: o.sleeping.ID, From: f.digest, Entries: 2, Version: "v1"},
		{RunID: o.held.ID, From: f.digest, Entries: 1, Version: "v1"},      // held: not moved
		{RunID: stale.ID, From: f.digest, Entries: 0, Version: "v1"},       // grew: not moved
		{RunID: o.completed.ID, From: f.digest, Entries: 0, Version: "v1"}, // ended: not moved
		{RunID: "not-a-run", From: f.digest, Entries: 0, Version: "v1"},
	}
	out, moved, err := f.s.UpgradeModule(f.ctx, hotfix, []store.Workflow{decl}, true, moves)
	ok(t, err)
	equal(t, "rebound digest", out[0].Digest, hotfix.Digest)
	slices.Sort(moved)
	want := []string{o.stuck.ID, o.sleeping.ID}
	slices.Sort(want)
	check(t, slices.Equal(moved, want), "moved: got %v, want %v", moved, want)

	got := f.getRun(o.stuck.ID)
	equal(t, "moved nondeterministic run's digest", got.Digest, hotfix.Digest)
	equal(t, "moved nondeterministic run runs again", got.Status, store.StatusRunning)
	check(t, got.Error == nil, "a moved run keeps its error %+v", got.Error)
	got = f.getRun(o.sleeping.ID)
	equal(t, "moved sleeping run's digest", got.Digest, hotfix.Digest)
	equalTime(t, "a moved run keeps its wake time", got.AvailableAt, before.AvailableAt)
	for _, r := range []store.Run{o.held, stale, o.pending, o.completed} {
		got := f.getRun(r.ID)
		equal(t, "pinned run's digest", got.Digest, f.digest)
		equal(t, "pinned run's version", got.Version, "v1")
	}
	w, err := f.s.ResolveWorkflow(f.ctx, f.tenant, wfName, "v1")
	ok(t, err)
	equal(t, "the version is rebound", w.Digest, hotfix.Digest)
	// The held run's holder goes on, on the module it was claimed with.
	ok(t, f.s.CommitStep(f.ctx, o.heldLease, f.runStep(o.held.ID, 1, "b"), longLease))

	// Without replace, a version bound elsewhere is still a conflict, and nothing moves.
	again := module(f.tenant, []byte("module-v1 hotfix 2"))
	decl.Digest = again.Digest
	_, _, err = f.s.UpgradeModule(f.ctx, again, []store.Workflow{decl}, false, []store.RunMove{{RunID: o.pending.ID, From: f.digest, Version: "v1"}})
	wantErr(t, err, store.ErrConflict)
	equal(t, "a refused upgrade moves nothing", f.getRun(o.pending.ID).Digest, f.digest)
}

func testUpgradeToNewVersion(t *testing.T, f *fixture) {
	o := f.openRuns()
	v2 := module(f.tenant, []byte("v2 code"))
	decl := wf(wfName, "v2")
	decl.TenantID, decl.Digest = f.tenant, v2.Digest
	_, moved, err := f.s.UpgradeModule(f.ctx, v2, []store.Workflow{decl}, false,
		[]store.RunMove{{RunID: o.pending.ID, From: f.digest, Entries: 0, Version: "v2"}})
	ok(t, err)
	check(t, slices.Equal(moved, []string{o.pending.ID}), "moved: got %v", moved)
	got := f.getRun(o.pending.ID)
	equal(t, "moved run's version", got.Version, "v2")
	equal(t, "moved run's digest", got.Digest, v2.Digest)
	equal(t, "moved run's status", got.Status, store.StatusPending)
	w, err := f.s.ResolveWorkflow(f.ctx, f.tenant, wfName, "v1")
	ok(t, err)
	equal(t, "the old version keeps its module", w.Digest, f.digest)
	equal(t, "other runs stay on v1", f.getRun(o.sleeping.ID).Version, "v1")
}

func testUpgradeReports(t *testing.T, f *fixture) {
	id := "6f1c2a9e-5b7d-4c3e-9a8b-1d2e3f405162"
	rep := json.RawMessage(`{"policy":"check","runs":[{"id":"x","verdict":"compatible"}]}`)
	ok(t, f.s.PutUpgradeReport(f.ctx, store.UpgradeReport{TenantID: f.tenant, ID: id, Report: rep}))
	wantErr(t, f.s.PutUpgradeReport(f.ctx, store.UpgradeReport{TenantID: f.tenant, ID: id, Report: rep}), store.ErrConflict)
	got, err := f.s.GetUpgradeReport(f.ctx, f.tenant, id)
	ok(t, err)
	equalJSON(t, "report", got.Report, string(rep))
	check(t, !got.CreatedAt.IsZero(), "report created at is zero")
	_, err = f.s.GetUpgradeReport(f.ctx, "tenant-none", id)
	wantErr(t, err, store.ErrNotFound)
	for _, bad := range []string{"00000000-0000-4000-8000-000000000000", "not-a-uuid", "", "'; DROP TABLE upgrades; --"} {
		_, err = f.s.GetUpgradeReport(f.ctx, f.tenant, bad)
		wantErr(t, err, store.ErrNotFound)
	}
}
