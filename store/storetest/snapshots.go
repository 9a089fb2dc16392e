package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// SnapshotRows is what a store's test build gives the Snapshots tests, to look at its
// snapshots where no store.Store method shows them: a finished, cancelled or swept run's
// snapshot must be gone, and only a snapshot planted on a finished run lets a sweep meet one.
// Every store the suite runs on must implement it (in a _test.go file of its package).
type SnapshotRows interface {
	// HasSnapshotRow reports whether the run has a stored snapshot.
	HasSnapshotRow(ctx context.Context, runID string) (bool, error)
	// PlantSnapshotRow stores snap for its run, unfenced, whatever the run's state.
	PlantSnapshotRow(ctx context.Context, snap store.Snapshot) error
}

// Durable snapshots (engine/snapshots.go): one per run, written in the fenced commit of the
// journal entry before it, handed to the next claim with the journal from its seq on.
var snapshotTests = []test{
	{"SaveWithAndWithoutHeldStep", testSnapshotSaveWithAndWithoutHeldStep},
	{"SecondSaveReplacesTheFirst", testSnapshotSecondSaveReplacesTheFirst},
	{"ClaimGetsTheSnapshotAndTheTail", testSnapshotClaimGetsTheSnapshotAndTheTail},
	{"StaleLeaseWritesNothing", testSnapshotStaleLeaseWritesNothing},
	{"EndsDeleteIt", testSnapshotEndsDeleteIt},
	{"ReplaceDeletesIt", testSnapshotReplaceDeletesIt},
	{"SweepDeletesIt", testSnapshotSweepDeletesIt},
	{"LargeDataRoundTrips", testSnapshotLargeDataRoundTrips},
	{"OversizedIsRefused", testSnapshotOversizedIsRefused},
	{"ResumeSaysWhereItsJournalStarts", testSnapshotResumeSaysWhereItsJournalStarts},
}

// rows is the store's SnapshotRows; the test fails when it has none.
func (f *fixture) rows() SnapshotRows {
	f.t.Helper()
	r, isRows := f.s.(SnapshotRows)
	if !isRows {
		f.t.Fatalf("%T does not implement storetest.SnapshotRows in its test build", f.s)
	}
	return r
}

// hasSnapshot reports whether the run has a stored snapshot.
func (f *fixture) hasSnapshot(runID string) bool {
	f.t.Helper()
	has, err := f.rows().HasSnapshotRow(f.ctx, runID)
	ok(f.t, err)
	return has
}

// snapshot is a snapshot of run runID at entry seq, after key lastKey, with data.
func snapshot(runID string, seq int, lastKey string, data []byte) store.Snapshot {
	return store.Snapshot{RunID: runID, Seq: seq, LastKey: lastKey, Code: "code-" + lastKey, Data: data}
}

// equalSnapshot compares a claim's snapshot with the one saved (CreatedAt is the store's).
func equalSnapshot(t *testing.T, got *store.Snapshot, want store.Snapshot) {
	t.Helper()
	check(t, got != nil, "no snapshot, want the one at %d", want.Seq)
	equal(t, "snapshot run", got.RunID, want.RunID)
	equal(t, "snapshot seq", got.Seq, want.Seq)
	equal(t, "snapshot last key", got.LastKey, want.LastKey)
	equal(t, "snapshot code", got.Code, want.Code)
	check(t, bytes.Equal(got.Data, want.Data), "snapshot data: got %d bytes, want %d (or not the same)", len(got.Data), len(want.Data))
	check(t, !got.CreatedAt.IsZero(), "snapshot has no creation time")
}

// reclaim hands l back and claims its run again, which must be the one runnable run.
func (f *fixture) reclaim(l store.Lease) store.Claim {
	f.t.Helper()
	ok(f.t, f.s.Release(f.ctx, l))
	return f.claim(l.RunID, longLease)
}

// committed claims a new run and commits n run steps s0..s(n-1).
func (f *fixture) committed(n int) store.Claim {
	f.t.Helper()
	r := f.run()
	c := f.claim(r.ID, longLease)
	for i := range n {
		ok(f.t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(r.ID, i, stepKey(i)), longLease))
	}
	return c
}

func stepKey(i int) string { return "s" + string(rune('0'+i)) }

func testSnapshotSaveWithAndWithoutHeldStep(t *testing.T, f *fixture) {
	c := f.committed(1)
	id := c.Run.ID
	ok(t, f.s.SaveSnapshot(f.ctx, c.Lease, nil, snapshot(id, 1, "s0", []byte("one")), longLease))
	equal(t, "journal after a save without a step", len(f.steps(id)), 1)
	check(t, f.hasSnapshot(id), "no snapshot after a save without a step")

	held := f.runStep(id, 1, "s1")
	ok(t, f.s.SaveSnapshot(f.ctx, c.Lease, &held, snapshot(id, 2, "s1", []byte("two")), longLease))
	equalStep(t, f.step(id, "s1"), held)
	// A held step saved again (an update, as CommitStep's) keeps its row.
	held.Attempt = 2
	ok(t, f.s.SaveSnapshot(f.ctx, c.Lease, &held, snapshot(id, 2, "s1", []byte("two")), longLease))
	equalStep(t, f.step(id, "s1"), held)
	equal(t, "journal after saves with a step", len(f.steps(id)), 2)

	// The lease still holds, and the run with it: nothing else can claim it.
	f.noClaim()
	rc := f.reclaim(c.Lease)
	equalSnapshot(t, rc.Snapshot, snapshot(id, 2, "s1", []byte("two")))
	equal(t, "journal from", rc.JournalFrom, 2)
	equal(t, "tail", len(rc.Journal), 0)
}

func testSnapshotSecondSaveReplacesTheFirst(t *testing.T, f *fixture) {
	c := f.committed(3)
	id := c.Run.ID
	ok(t, f.s.SaveSnapshot(f.ctx, c.Lease, nil, snapshot(id, 1, "s0", []byte("first")), longLease))
	second := snapshot(id, 3, "s2", []byte("second"))
	second.Code = "other code"
	ok(t, f.s.SaveSnapshot(f.ctx, c.Lease, nil, second, longLease))
	rc := f.reclaim(c.Lease)
	equalSnapshot(t, rc.Snapshot, second)
	equal(t, "journal from", rc.JournalFrom, 3)
	equal(t, "tail", len(rc.Journal), 0)
	// An older snapshot saved after a newer one replaces it too: the store keeps the last.
	ok(t, f.s.SaveSnapshot(f.ctx, rc.Lease, nil, snapshot(id, 1, "s0", []byte("again")), longLease))
	rc = f.reclaim(rc.Lease)
	equalSnapshot(t, rc.Snapshot, snapshot(id, 1, "s0", []byte("again")))
	equal(t, "tail after the older snapshot", len(rc.Journal), 2)
}

func testSnapshotClaimGetsTheSnapshotAndTheTail(t *testing.T, f *fixture) {
	// Three runs claimed in one batch: one with a snapshot mid-journal, one with none, one with
	// a snapshot past its last entry.
	mid, none, past := f.run(), f.run(), f.run()
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claimed", len(claims), 3)
	for _, c := range claims {
		check(t, c.Snapshot == nil && c.JournalFrom == 0, "a first claim has snapshot %v from %d", c.Snapshot, c.JournalFrom)
		for i := range 5 {
			ok(t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(c.Run.ID, i, stepKey(i)), longLease))
		}
		switch c.Run.ID {
		case mid.ID:
			ok(t, f.s.SaveSnapshot(f.ctx, c.Lease, nil, snapshot(mid.ID, 3, "s2", []byte("mid")), longLease))
		case past.ID:
			ok(t, f.s.SaveSnapshot(f.ctx, c.Lease, nil, snapshot(past.ID, 5, "s4", []byte("past")), longLease))
		}
		ok(t, f.s.Release(f.ctx, c.Lease))
	}
	claims, err = f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claimed again", len(claims), 3)
	for _, c := range claims {
		full := f.steps(c.Run.ID)
		equal(t, "journal length", len(full), 5)
		switch c.Run.ID {
		case mid.ID:
			equalSnapshot(t, c.Snapshot, snapshot(mid.ID, 3, "s2", []byte("mid")))
			equal(t, "journal from", c.JournalFrom, 3)
		case past.ID:
			equalSnapshot(t, c.Snapshot, snapshot(past.ID, 5, "s4", []byte("past")))
			equal(t, "journal from", c.JournalFrom, 5)
		case none.ID:
			check(t, c.Snapshot == nil, "a run with no snapshot was claimed with one: %+v", c.Snapshot)
			equal(t, "journal from", c.JournalFrom, 0)
		}
		equal(t, "tail length", len(c.Journal), 5-c.JournalFrom)
		// The entries the claim left out are a page from the top (the engine's fallback
		// when it cannot restore the snapshot).
		prefix, _, err := f.s.JournalPage(f.ctx, c.Lease, 0, max(c.JournalFrom, 1))
		ok(t, err)
		prefix = prefix[:min(len(prefix), c.JournalFrom)]
		equal(t, "prefix length", len(prefix), c.JournalFrom)
		whole := append(prefix, c.Journal...)
		for i := range full {
			equalStep(t, whole[i], full[i])
		}
	}
}

func testSnapshotStaleLeaseWritesNothing(t *testing.T, f *fixture) {
	r := f.run()
	stale := f.claim(r.ID, time.Millisecond)
	ok(t, f.s.CommitStep(f.ctx, stale.Lease, f.runStep(r.ID, 0, "s0"), time.Millisecond))
	f.pass(5 * time.Millisecond)
	cur := f.claim(r.ID, longLease) // the lease ran out and another host took the run
	held := f.runStep(r.ID, 1, "s1")
	wantErr(t, f.s.SaveSnapshot(f.ctx, stale.Lease, &held, snapshot(r.ID, 2, "s1", []byte("stale")), longLease), store.ErrLeaseLost)
	wantErr(t, f.s.SaveSnapshot(f.ctx, stale.Lease, nil, snapshot(r.ID, 1, "s0", []byte("stale")), longLease), store.ErrLeaseLost)
	_, _, err := f.s.JournalPage(f.ctx, stale.Lease, 0, 1)
	wantErr(t, err, store.ErrLeaseLost)
	equal(t, "journal after stale saves", len(f.steps(r.ID)), 1)
	check(t, !f.hasSnapshot(r.ID), "a stale save wrote a snapshot")
	rc := f.reclaim(cur.Lease)
	check(t, rc.Snapshot == nil, "a stale save's snapshot was claimed")
	equal(t, "journal claimed", len(rc.Journal), 1)

	// A lease on an ended run fences them too, and an unknown run's.
	ok(t, f.s.Finish(f.ctx, rc.Lease, store.StatusCompleted, json.RawMessage(`1`), nil))
	wantErr(t, f.s.SaveSnapshot(f.ctx, rc.Lease, nil, snapshot(r.ID, 1, "s0", []byte("late")), longLease), store.ErrLeaseLost)
	_, _, err = f.s.JournalPage(f.ctx, rc.Lease, 0, 1)
	wantErr(t, err, store.ErrLeaseLost)
	check(t, !f.hasSnapshot(r.ID), "a save after the run's end wrote a snapshot")
	unknown := store.Lease{RunID: "00000000-0000-4000-8000-000000000000", Epoch: 1}
	wantErr(t, f.s.SaveSnapshot(f.ctx, unknown, nil, snapshot(unknown.RunID, 0, "", []byte("x")), longLease), store.ErrLeaseLost)
	_, _, err = f.s.JournalPage(f.ctx, unknown, 0, 1)
	wantErr(t, err, store.ErrLeaseLost)
}

func testSnapshotEndsDeleteIt(t *testing.T, f *fixture) {
	ends := map[string]func(c store.Claim){
		"Finish": func(c store.Claim) {
			ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil))
		},
		"Finish nondeterministic": func(c store.Claim) {
			ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusNondeterministic, nil, &abi.ErrorInfo{Code: abi.CodeNondeterministic, Message: "x"}))
		},
		"CommitAndFinish": func(c store.Claim) {
			ok(t, f.s.CommitAndFinish(f.ctx, c.Lease, f.runStep(c.Run.ID, 2, "s2"), store.StatusFailed, nil, &abi.ErrorInfo{Message: "no"}))
		},
		"CancelRun": func(c store.Claim) {
			_, err := f.s.CancelRun(f.ctx, f.tenant, c.Run.ID)
			ok(t, err)
		},
	}
	var kept store.Claim
	for what, end := range ends {
		c := f.committed(2)
		ok(t, f.s.SaveSnapshot(f.ctx, c.Lease, nil, snapshot(c.Run.ID, 2, "s1", []byte(what)), longLease))
		check(t, f.hasSnapshot(c.Run.ID), "%s: no snapshot saved", what)
		if kept.Run.ID == "" {
			// A run that does not end keeps its snapshot through the others' ends.
			kept = f.committed(1)
			ok(t, f.s.SaveSnapshot(f.ctx, kept.Lease, nil, snapshot(kept.Run.ID, 1, "s0", []byte("kept")), longLease))
		}
		end(c)
		check(t, !f.hasSnapshot(c.Run.ID), "%s left the run's snapshot", what)
	}
	check(t, f.hasSnapshot(kept.Run.ID), "another run's end deleted a snapshot")
}

func testSnapshotReplaceDeletesIt(t *testing.T, f *fixture) {
	f.putModule(f.tenant, []byte("module-other"), false, wf("other", "v1"))
	moved := f.committed(2)
	ok(t, f.s.SaveSnapshot(f.ctx, moved.Lease, nil, snapshot(moved.Run.ID, 2, "s1", []byte("old code")), longLease))
	other := f.runOf(f.tenant, "other", "v1", module(f.tenant, []byte("module-other")).Digest, "")
	oc := f.claim(other.ID, longLease)
	ok(t, f.s.SaveSnapshot(f.ctx, oc.Lease, nil, snapshot(other.ID, 0, "", []byte("not moved")), longLease))
	ok(t, f.s.Release(f.ctx, moved.Lease))

	f.putModule(f.tenant, []byte("module-v1-hotfix"), true, wf(wfName, "v1"))
	check(t, !f.hasSnapshot(moved.Run.ID), "a run moved to new code kept its snapshot")
	check(t, f.hasSnapshot(other.ID), "a hotfix of another workflow deleted a snapshot")
	c := f.claim(moved.Run.ID, longLease)
	check(t, c.Snapshot == nil, "a moved run was claimed with its old snapshot")
	equal(t, "journal from", c.JournalFrom, 0)
	equal(t, "journal of a moved run", len(c.Journal), 2)
}

func testSnapshotSweepDeletesIt(t *testing.T, f *fixture) {
	mk := func(retention int) store.Run {
		r, _, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
			Input: json.RawMessage(`{}`), RetentionDays: retention})
		ok(t, err)
		_, err = f.s.CancelRun(f.ctx, f.tenant, r.ID)
		ok(t, err)
		// No store method leaves a snapshot on an ended run: plant one, as a store that
		// failed to delete it would have.
		ok(t, f.rows().PlantSnapshotRow(f.ctx, snapshot(r.ID, 0, "", []byte("planted"))))
		check(t, f.hasSnapshot(r.ID), "no planted snapshot")
		return r
	}
	gone, kept := mk(0), mk(30)
	f.pass(2 * time.Millisecond)
	n, err := f.s.SweepExpired(f.ctx, 100)
	ok(t, err)
	equal(t, "swept", n, 1)
	_, err = f.s.GetRun(f.ctx, f.tenant, gone.ID)
	wantErr(t, err, store.ErrNotFound)
	check(t, !f.hasSnapshot(gone.ID), "a swept run's snapshot was left")
	check(t, f.hasSnapshot(kept.ID), "a kept run's snapshot was swept")
}

func testSnapshotLargeDataRoundTrips(t *testing.T, f *fixture) {
	c := f.committed(1)
	data := make([]byte, 300<<10)
	_, _ = rand.Read(data)
	held := f.runStep(c.Run.ID, 1, "s1")
	snap := snapshot(c.Run.ID, 2, "s1", data)
	ok(t, f.s.SaveSnapshot(f.ctx, c.Lease, &held, snap, longLease))
	rc := f.reclaim(c.Lease)
	equalSnapshot(t, rc.Snapshot, snap)
	equal(t, "tail", len(rc.Journal), 0)
	// The same size again, replacing it, with a step.
	_, _ = rand.Read(data)
	held = f.runStep(c.Run.ID, 2, "s2")
	snap = snapshot(c.Run.ID, 3, "s2", bytes.Clone(data))
	ok(t, f.s.SaveSnapshot(f.ctx, rc.Lease, &held, snap, longLease))
	rc = f.reclaim(rc.Lease)
	equalSnapshot(t, rc.Snapshot, snap)
}

func testSnapshotOversizedIsRefused(t *testing.T, f *fixture) {
	c := f.committed(1)
	held := f.runStep(c.Run.ID, 1, "s1")
	huge := snapshot(c.Run.ID, 2, "s1", make([]byte, store.MaxSnapshotBytes+1))
	wantErr(t, f.s.SaveSnapshot(f.ctx, c.Lease, &held, huge, longLease), store.ErrRefused)
	negative := snapshot(c.Run.ID, -1, "", []byte("x"))
	wantErr(t, f.s.SaveSnapshot(f.ctx, c.Lease, nil, negative, longLease), store.ErrRefused)
	nul := snapshot(c.Run.ID, 1, "s0", []byte("x"))
	nul.Code = "code\x00"
	wantErr(t, f.s.SaveSnapshot(f.ctx, c.Lease, &held, nul, longLease), store.ErrRefused)
	invalid := snapshot(c.Run.ID, 1, "s0\xff", []byte("x"))
	wantErr(t, f.s.SaveSnapshot(f.ctx, c.Lease, nil, invalid, longLease), store.ErrRefused)
	equal(t, "journal after refused saves", len(f.steps(c.Run.ID)), 1)
	check(t, !f.hasSnapshot(c.Run.ID), "a refused save wrote a snapshot")
	// The lease still holds: a refusal is no lease loss.
	ok(t, f.s.SaveSnapshot(f.ctx, c.Lease, &held, snapshot(c.Run.ID, 2, "s1", []byte("fits")), longLease))
	equal(t, "journal after a save that fits", len(f.steps(c.Run.ID)), 2)
}

func testSnapshotResumeSaysWhereItsJournalStarts(t *testing.T, f *fixture) {
	c := f.committed(3)
	id := c.Run.ID
	ok(t, f.s.SaveSnapshot(f.ctx, c.Lease, nil, snapshot(id, 2, "s1", []byte("parked")), longLease))
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, ptr(f.now().Add(-time.Millisecond))))
	rc, resumed, err := f.s.ResumeRun(f.ctx, resumeParams(id, 1))
	ok(t, err)
	check(t, resumed, "a due run was not resumed")
	check(t, rc.Snapshot == nil, "a resume returned a snapshot")
	equal(t, "journal from", rc.JournalFrom, 1)
	equal(t, "tail", len(rc.Journal), 2)
	equal(t, "first entry of the tail", rc.Journal[0].Seq, 1)
	// The snapshot is still the run's: the next claim gets it.
	rc = f.reclaim(rc.Lease)
	equalSnapshot(t, rc.Snapshot, snapshot(id, 2, "s1", []byte("parked")))
}
