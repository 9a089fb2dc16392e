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

// JournalCutter is what a store's test build gives the Snapshots tests to cut a journal back
// under a snapshot, as a future "restart from step i" would: no store.Store method does. Every
// store the suite runs on must implement it (in a _test.go file of its package).
type JournalCutter interface {
	// CutJournal deletes the run's journal entries from entry from on, whatever the run's state.
	CutJournal(ctx context.Context, runID string, from int) error
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
	{"ClaimLeavesOutOneItsJournalDoesNotHold", testSnapshotClaimLeavesOutOneItsJournalDoesNotHold},
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
	ok(t, f.s.Finish(f.ctx, rc.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
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
			ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
		},
		"Finish nondeterministic": func(c store.Claim) {
			ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusNondeterministic, nil, &abi.ErrorInfo{Code: abi.CodeNondeterministic, Message: "x"}, nil))
		},
		"CommitAndFinish": func(c store.Claim) {
			ok(t, f.s.CommitAndFinish(f.ctx, c.Lease, f.runStep(c.Run.ID, 2, "s2"), store.StatusFailed, nil, &abi.ErrorInfo{Message: "no"}, nil))
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

// A snapshot was taken after entry Seq-1, whose key it keeps (LastKey): a claim hands it over
// only while the journal still has that entry with that key. One whose journal was cut back
// under it, or whose entry Seq-1 has another key, or that is past the journal's end, describes
// a journal the store does not hold: the claim leaves it out and reads the journal from the
// top, and deletes it, so that the journal grown back to the same keys does not make it look
// whole again.
func testSnapshotClaimLeavesOutOneItsJournalDoesNotHold(t *testing.T, f *fixture) {
	cutter, isCutter := f.s.(JournalCutter)
	check(t, isCutter, "%T does not implement storetest.JournalCutter in its test build", f.s)
	type want struct {
		snap    *store.Snapshot // the snapshot the claim hands over; nil: none, and its row deleted
		journal int             // entries in the claim
	}
	cases := map[string]struct {
		snap store.Snapshot
		cut  int // the journal's entries from this one on are deleted after the save (0: none)
		want want
	}{
		"cut under it":              {snap: snapshot("", 4, "s3", []byte("cut")), cut: 2, want: want{nil, 2}},
		"cut to its end":            {snap: snapshot("", 4, "s3", []byte("kept")), cut: 4, want: want{&store.Snapshot{Seq: 4}, 0}},
		"another key at its entry":  {snap: snapshot("", 3, "s9", []byte("other")), want: want{nil, 5}},
		"past the journal's end":    {snap: snapshot("", 7, "s6", []byte("past")), want: want{nil, 5}},
		"at the top":                {snap: snapshot("", 0, "", []byte("top")), want: want{&store.Snapshot{Seq: 0}, 5}},
		"at the top after a key":    {snap: snapshot("", 0, "s0", []byte("top, keyed")), want: want{nil, 5}},
		"whole, at the journal end": {snap: snapshot("", 5, "s4", []byte("end")), want: want{&store.Snapshot{Seq: 5}, 0}},
	}
	byRun := map[string]string{}
	for name := range cases {
		byRun[f.run().ID] = name
	}
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claimed", len(claims), len(cases))
	for _, c := range claims {
		tc := cases[byRun[c.Run.ID]]
		for i := range 5 {
			ok(t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(c.Run.ID, i, stepKey(i)), longLease))
		}
		snap := tc.snap
		snap.RunID = c.Run.ID
		ok(t, f.s.SaveSnapshot(f.ctx, c.Lease, nil, snap, longLease))
		if tc.cut > 0 {
			ok(t, cutter.CutJournal(f.ctx, c.Run.ID, tc.cut))
		}
		ok(t, f.s.Release(f.ctx, c.Lease))
	}
	// All in one claim, as a host claims them: each run's snapshot is checked on its own.
	claims, err = f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claimed again", len(claims), len(cases))
	for _, c := range claims {
		name := byRun[c.Run.ID]
		tc := cases[name]
		if tc.want.snap == nil {
			check(t, c.Snapshot == nil, "%s: the claim handed over the snapshot at %d", name, tc.snap.Seq)
			equal(t, name+": journal from", c.JournalFrom, 0)
			check(t, !f.hasSnapshot(c.Run.ID), "%s: the snapshot the claim left out was not deleted", name)
		} else {
			snap := tc.snap
			snap.RunID = c.Run.ID
			equalSnapshot(t, c.Snapshot, snap)
			equal(t, name+": journal from", c.JournalFrom, tc.want.snap.Seq)
		}
		equal(t, name+": entries", len(c.Journal), tc.want.journal)
		for i, e := range c.Journal {
			equal(t, name+": entry", e.Seq, c.JournalFrom+i)
		}
	}
	// The journal cut under a snapshot grows back to the same keys: the snapshot is gone for
	// good, not handed over again because entry 3 is s3 once more.
	for _, c := range claims {
		if byRun[c.Run.ID] != "cut under it" {
			ok(t, f.s.Release(f.ctx, c.Lease))
			continue
		}
		for i := 2; i < 5; i++ {
			ok(t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(c.Run.ID, i, stepKey(i)), longLease))
		}
		ok(t, f.s.Release(f.ctx, c.Lease))
	}
	claims, err = f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	for _, c := range claims {
		if byRun[c.Run.ID] == "cut under it" {
			check(t, c.Snapshot == nil, "a snapshot deleted for its journal was handed over once the journal grew back")
			equal(t, "journal grown back", len(c.Journal), 5)
		}
	}
}
