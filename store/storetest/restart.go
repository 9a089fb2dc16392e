package storetest

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/wfhost/wfhost/store"
)

var restartTests = []test{
	{"CopiesTheKeptJournal", testRestartCopies},
	{"RefusesWhatItCannotRestart", testRestartRefuses},
}

// restartOf is the NewRun of a restart of r with input.
func restartOf(r store.Run, input string) store.NewRun {
	return store.NewRun{TenantID: r.TenantID, Workflow: r.Workflow, Version: r.Version, Digest: r.Digest,
		Input: json.RawMessage(input), RetentionDays: r.RetentionDays}
}

// A restart is a pending run, claimable now, linked to its source, holding the source's first
// keep entries as they were; the source is unchanged.
func testRestartCopies(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	for i, key := range []string{"a", "b", "c"} {
		ok(t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(r.ID, i, key), longLease))
	}
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusFailed, nil, nil))
	next, err := f.s.RestartRun(f.ctx, r.ID, 2, restartOf(c.Run, `{"n":2}`))
	ok(t, err)
	equal(t, "status", next.Status, store.StatusPending)
	equal(t, "link", next.RestartedFrom, r.ID)
	equal(t, "link as read", f.getRun(next.ID).RestartedFrom, r.ID)
	equalJSON(t, "input", next.Input, `{"n":2}`)
	steps, src := f.steps(next.ID), f.steps(r.ID)
	equal(t, "kept entries", len(steps), 2)
	for i := range steps {
		check(t, steps[i].Key == src[i].Key && steps[i].Seq == i && steps[i].StartedAt.Equal(src[i].StartedAt) &&
			string(steps[i].Output) == string(src[i].Output), "entry %d: %+v, want the source's %+v", i, steps[i], src[i])
	}
	equal(t, "the source's journal", len(src), 3)
	equal(t, "the source's status", f.getRun(r.ID).Status, store.StatusFailed)
	f.claim(next.ID, longLease)
	fromScratch, err := f.s.RestartRun(f.ctx, r.ID, 0, restartOf(c.Run, `{}`))
	ok(t, err)
	equal(t, "a restart from scratch keeps nothing", len(f.steps(fromScratch.ID)), 0)
}

// A live source, another tenant's, an unknown one, or more entries than the source has are
// refused, and nothing is created.
func testRestartRefuses(t *testing.T, f *fixture) {
	live := f.run()
	_, err := f.s.RestartRun(f.ctx, live.ID, 0, restartOf(live, `{}`))
	check(t, errors.Is(err, store.ErrConflict), "a live source: %v, want ErrConflict", err)
	c := f.claim(live.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, []byte(`1`), nil))
	_, err = f.s.RestartRun(f.ctx, live.ID, 1, restartOf(live, `{}`))
	check(t, errors.Is(err, store.ErrConflict), "keeping more entries than the source has: %v, want ErrConflict", err)
	other := restartOf(live, `{}`)
	other.TenantID = "someone-else"
	_, err = f.s.RestartRun(f.ctx, live.ID, 0, other)
	check(t, errors.Is(err, store.ErrNotFound), "another tenant's run: %v, want ErrNotFound", err)
	_, err = f.s.RestartRun(f.ctx, "00000000-0000-4000-8000-000000000000", 0, restartOf(live, `{}`))
	check(t, errors.Is(err, store.ErrNotFound), "an unknown run: %v, want ErrNotFound", err)
	runs, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{})
	ok(t, err)
	equal(t, "runs", len(runs), 1)
}
