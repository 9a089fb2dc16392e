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
	{"ForksALiveRun", testForkALiveRun},
	{"ForkRefusesWhatItCannotFork", testForkRefuses},
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
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusFailed, nil, nil, nil))
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
	// The restart's first claim reads the kept entries: its pass replays them, never runs
	// them again.
	first := f.claim(next.ID, longLease)
	equal(t, "the kept entries its first claim reads", len(first.Journal), 2)
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
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, []byte(`1`), nil, nil))
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

// A fork of a live run waiting on an event is a pending run, linked to it, holding the
// entries before the wait; the source is untouched: still running, its lease held, its wait
// still waiting. An ended run is forked as a restart is.
func testForkALiveRun(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	for i, key := range []string{"a", "b"} {
		ok(t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(r.ID, i, key), longLease))
	}
	_, err := f.s.ReachWait(f.ctx, c.Lease, f.waitStep(r.ID, 2, "approval", "approve", `{}`, nil), longLease)
	ok(t, err)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, nil))
	var fork store.Run
	fork, err = f.s.ForkRun(f.ctx, r.ID, 2, restartOf(c.Run, `{"what":"if"}`))
	ok(t, err)
	equal(t, "status", fork.Status, store.StatusPending)
	equal(t, "link", f.getRun(fork.ID).RestartedFrom, r.ID)
	equalJSON(t, "input", fork.Input, `{"what":"if"}`)
	steps := f.steps(fork.ID)
	equal(t, "kept entries", len(steps), 2)
	equal(t, "kept keys", steps[0].Key+","+steps[1].Key, "a,b")
	src := f.getRun(r.ID)
	check(t, !src.Status.Terminal(), "the source ended: %s", src.Status)
	equal(t, "the source's journal", len(f.steps(r.ID)), 3)
	equal(t, "the source's wait", f.step(r.ID, "approval").Status, store.StepWaiting)
	equal(t, "the kept entries the fork's first claim reads", len(f.claim(fork.ID, longLease).Journal), 2)
	ended := f.run()
	ec := f.claim(ended.ID, longLease)
	ok(t, f.s.CommitStep(f.ctx, ec.Lease, f.runStep(ended.ID, 0, "a"), longLease))
	ok(t, f.s.Finish(f.ctx, ec.Lease, store.StatusCompleted, []byte(`1`), nil, nil))
	again, err := f.s.ForkRun(f.ctx, ended.ID, 1, restartOf(ended, `{}`))
	ok(t, err)
	equal(t, "a fork of an ended run keeps its entry", len(f.steps(again.ID)), 1)
}

// A fork that would keep an entry that has not ended (a wait still waiting), more entries
// than the source has, another tenant's run or an unknown one is refused, and nothing is
// created.
func testForkRefuses(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	ok(t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(r.ID, 0, "a"), longLease))
	_, err := f.s.ReachWait(f.ctx, c.Lease, f.waitStep(r.ID, 1, "approval", "approve", `{}`, nil), longLease)
	ok(t, err)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, nil))
	_, err = f.s.ForkRun(f.ctx, r.ID, 2, restartOf(r, `{}`))
	check(t, errors.Is(err, store.ErrConflict), "keeping a wait that waits: %v, want ErrConflict", err)
	_, err = f.s.ForkRun(f.ctx, r.ID, 3, restartOf(r, `{}`))
	check(t, errors.Is(err, store.ErrConflict), "keeping more entries than the source has: %v, want ErrConflict", err)
	other := restartOf(r, `{}`)
	other.TenantID = "someone-else"
	_, err = f.s.ForkRun(f.ctx, r.ID, 0, other)
	check(t, errors.Is(err, store.ErrNotFound), "another tenant's run: %v, want ErrNotFound", err)
	_, err = f.s.ForkRun(f.ctx, "00000000-0000-4000-8000-000000000000", 0, restartOf(r, `{}`))
	check(t, errors.Is(err, store.ErrNotFound), "an unknown run: %v, want ErrNotFound", err)
	runs, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{})
	ok(t, err)
	equal(t, "runs", len(runs), 1)
}
