package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

// Journal windows (issue 13, point 7): a claim or a resume returns at most JournalWindow
// entries of each run's journal, JournalMore saying whether more follow, and the activation
// reads the rest with JournalPage as its replay reaches them.
var windowTests = []test{
	{"SmallerEqualAndLargerThanTheJournal", testWindowSizes},
	{"AfterTheSnapshot", testWindowAfterTheSnapshot},
	{"ThreeRunsInOneClaim", testWindowThreeRunsInOneClaim},
	{"PagesToTheEnd", testWindowPagesToTheEnd},
	{"PageUnderAStaleLease", testWindowPageUnderAStaleLease},
	{"Resume", testWindowResume},
}

// windowStep is entry seq of run runID, with an output of its own, so that entries read in
// the wrong order or twice do not compare equal.
func (f *fixture) windowStep(runID string, seq int) store.Step {
	return store.Step{RunID: runID, Seq: seq, Key: fmt.Sprintf("w%03d", seq), Kind: store.KindRun,
		Status: store.StepCompleted, Output: json.RawMessage(fmt.Sprintf(`{"seq":%d}`, seq)), Attempt: 1,
		StartedAt: f.now(), CompletedAt: ptr(f.now())}
}

// journaled claims a new run, commits n entries of it (windowStep) and releases it, so that
// the next claim takes it with its journal.
func (f *fixture) journaled(n int) store.Run {
	f.t.Helper()
	r := f.run()
	c := f.claim(r.ID, longLease)
	for i := range n {
		ok(f.t, f.s.CommitStep(f.ctx, c.Lease, f.windowStep(r.ID, i), longLease))
	}
	ok(f.t, f.s.Release(f.ctx, c.Lease))
	return r
}

// claimWindow claims the one runnable run, which must be runID, with a journal window.
func (f *fixture) claimWindow(runID string, window int) store.Claim {
	f.t.Helper()
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease, JournalWindow: window})
	ok(f.t, err)
	if len(claims) != 1 || claims[0].Run.ID != runID {
		f.t.Fatalf("claim: got %d claims %v, want exactly run %s", len(claims), claimIDs(claims), runID)
	}
	return claims[0]
}

// equalSteps compares entries with the journal as ListSteps gives it, from entry from on.
func equalSteps(t *testing.T, what string, got, whole []store.Step, from int) {
	t.Helper()
	check(t, from+len(got) <= len(whole), "%s: %d entries from %d of a journal of %d", what, len(got), from, len(whole))
	for i, st := range got {
		equalStep(t, st, whole[from+i])
	}
}

func testWindowSizes(t *testing.T, f *fixture) {
	r := f.journaled(5)
	whole := f.steps(r.ID)
	equal(t, "journal length", len(whole), 5)
	for _, tc := range []struct {
		window, entries int
		more            bool
	}{
		{1, 1, true},
		{3, 3, true},
		{4, 4, true},
		{5, 5, false},
		{6, 5, false},
		{100, 5, false},
		{0, 5, false}, // no window: the whole journal, as before windows
	} {
		c := f.claimWindow(r.ID, tc.window)
		what := fmt.Sprintf("window %d", tc.window)
		equal(t, what+": entries", len(c.Journal), tc.entries)
		equal(t, what+": more", c.JournalMore, tc.more)
		equal(t, what+": journal from", c.JournalFrom, 0)
		equalSteps(t, what, c.Journal, whole, 0)
		ok(t, f.s.Release(f.ctx, c.Lease))
	}
	done := f.claim(r.ID, longLease)
	ok(t, f.s.Finish(f.ctx, done.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	// A window on a first activation: no journal, nothing more.
	n := f.run()
	c := f.claimWindow(n.ID, 2)
	equal(t, "first activation: entries", len(c.Journal), 0)
	equal(t, "first activation: more", c.JournalMore, false)
	// A later activation with an empty journal.
	ok(t, f.s.Release(f.ctx, c.Lease))
	c = f.claimWindow(n.ID, 2)
	equal(t, "empty journal: entries", len(c.Journal), 0)
	equal(t, "empty journal: more", c.JournalMore, false)
}

func testWindowAfterTheSnapshot(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	for i := range 7 {
		ok(t, f.s.CommitStep(f.ctx, c.Lease, f.windowStep(r.ID, i), longLease))
	}
	snap := snapshot(r.ID, 3, "w002", []byte("at three"))
	ok(t, f.s.SaveSnapshot(f.ctx, c.Lease, nil, snap, longLease))
	ok(t, f.s.Release(f.ctx, c.Lease))
	whole := f.steps(r.ID)
	// Entries 3..6 follow the snapshot: the window counts from there.
	for _, tc := range []struct {
		window, entries int
		more            bool
	}{
		{2, 2, true},
		{3, 3, true},
		{4, 4, false},
		{5, 4, false},
		{0, 4, false},
	} {
		c := f.claimWindow(r.ID, tc.window)
		what := fmt.Sprintf("window %d after a snapshot at 3", tc.window)
		equalSnapshot(t, c.Snapshot, snap)
		equal(t, what+": journal from", c.JournalFrom, 3)
		equal(t, what+": entries", len(c.Journal), tc.entries)
		equal(t, what+": more", c.JournalMore, tc.more)
		equalSteps(t, what, c.Journal, whole, 3)
		ok(t, f.s.Release(f.ctx, c.Lease))
	}
}

func testWindowThreeRunsInOneClaim(t *testing.T, f *fixture) {
	for range 3 {
		f.run()
	}
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claimed first", len(claims), 3)
	lengths := map[string]int{}
	for i, c := range claims {
		n := []int{2, 4, 9}[i]
		lengths[c.Run.ID] = n
		for seq := range n {
			ok(t, f.s.CommitStep(f.ctx, c.Lease, f.windowStep(c.Run.ID, seq), longLease))
		}
		ok(t, f.s.Release(f.ctx, c.Lease))
	}
	const window = 4
	claims, err = f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease, JournalWindow: window})
	ok(t, err)
	equal(t, "claimed", len(claims), 3)
	for _, c := range claims {
		n, known := lengths[c.Run.ID]
		check(t, known, "claimed an unknown run %s", c.Run.ID)
		what := fmt.Sprintf("run of %d entries", n)
		equal(t, what+": entries", len(c.Journal), min(n, window))
		equal(t, what+": more", c.JournalMore, n > window)
		equalSteps(t, what, c.Journal, f.steps(c.Run.ID), 0)
		for _, st := range c.Journal {
			equal(t, what+": an entry's run", st.RunID, c.Run.ID)
		}
	}
}

func testWindowPagesToTheEnd(t *testing.T, f *fixture) {
	r := f.journaled(11)
	whole := f.steps(r.ID)
	equal(t, "journal length", len(whole), 11)
	c := f.claimWindow(r.ID, 3)
	check(t, c.JournalMore, "a window of 3 of 11 entries says no more follow")
	for _, limit := range []int{1, 2, 4, 8, 11, 12} {
		// Paging from where the window ends, limit entries at a time, reproduces ListSteps.
		got := append([]store.Step(nil), c.Journal...)
		more := c.JournalMore
		for pages := 0; more; pages++ {
			check(t, pages <= len(whole), "paging by %d does not end", limit)
			page, m, err := f.s.JournalPage(f.ctx, c.Lease, len(got), limit)
			ok(t, err)
			check(t, len(page) <= limit, "a page of %d has %d entries", limit, len(page))
			check(t, len(page) > 0 || !m, "an empty page of %d says more follow", limit)
			check(t, !m || len(page) == limit, "a page of %d entries of %d says more follow", len(page), limit)
			got, more = append(got, page...), m
		}
		equal(t, fmt.Sprintf("entries paged by %d", limit), len(got), len(whole))
		equalSteps(t, fmt.Sprintf("paged by %d", limit), got, whole, 0)
	}
	// From the start, the whole journal in one page; exactly the rest; past the end.
	all, more, err := f.s.JournalPage(f.ctx, c.Lease, 0, 100)
	ok(t, err)
	equal(t, "one page: entries", len(all), 11)
	equal(t, "one page: more", more, false)
	equalSteps(t, "one page", all, whole, 0)
	rest, more, err := f.s.JournalPage(f.ctx, c.Lease, 7, 4)
	ok(t, err)
	equal(t, "the rest exactly: entries", len(rest), 4)
	equal(t, "the rest exactly: more", more, false)
	equalSteps(t, "the rest exactly", rest, whole, 7)
	mid, more, err := f.s.JournalPage(f.ctx, c.Lease, 7, 3)
	ok(t, err)
	equal(t, "one short of the rest: entries", len(mid), 3)
	equal(t, "one short of the rest: more", more, true)
	for _, from := range []int{11, 12, 1000} {
		past, more, err := f.s.JournalPage(f.ctx, c.Lease, from, 5)
		ok(t, err)
		equal(t, fmt.Sprintf("from %d: entries", from), len(past), 0)
		equal(t, fmt.Sprintf("from %d: more", from), more, false)
	}
	// A page of no entries is a caller's error, not a panic.
	for _, limit := range []int{0, -1} {
		_, _, err := f.s.JournalPage(f.ctx, c.Lease, 0, limit)
		check(t, err != nil, "a page of %d entries did not fail", limit)
	}
}

func testWindowPageUnderAStaleLease(t *testing.T, f *fixture) {
	r := f.journaled(4)
	stale := f.claim(r.ID, time.Millisecond)
	f.pass(5 * time.Millisecond)
	cur := f.claimWindow(r.ID, 2) // the lease ran out and another host took the run
	check(t, cur.JournalMore, "a window of 2 of 4 entries says no more follow")
	_, _, err := f.s.JournalPage(f.ctx, stale.Lease, 2, 2)
	wantErr(t, err, store.ErrLeaseLost)
	page, more, err := f.s.JournalPage(f.ctx, cur.Lease, 2, 2)
	ok(t, err)
	equal(t, "current lease: entries", len(page), 2)
	equal(t, "current lease: more", more, false)
	// A lease on an ended run, and on an unknown run.
	ok(t, f.s.Finish(f.ctx, cur.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	_, _, err = f.s.JournalPage(f.ctx, cur.Lease, 0, 2)
	wantErr(t, err, store.ErrLeaseLost)
	unknown := store.Lease{RunID: "00000000-0000-4000-8000-000000000000", Epoch: 1}
	_, _, err = f.s.JournalPage(f.ctx, unknown, 0, 2)
	wantErr(t, err, store.ErrLeaseLost)
}

func testWindowResume(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	for i := range 6 {
		ok(t, f.s.CommitStep(f.ctx, c.Lease, f.windowStep(r.ID, i), longLease))
	}
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, ptr(f.now().Add(-time.Millisecond))))
	whole := f.steps(r.ID)
	// Entries 1..5 follow the parked entry 1.
	for _, tc := range []struct {
		window, entries int
		more            bool
	}{
		{2, 2, true},
		{4, 4, true},
		{5, 5, false},
		{9, 5, false},
		{0, 5, false},
	} {
		p := resumeParams(r.ID, 1)
		p.JournalWindow = tc.window
		rc, resumed, err := f.s.ResumeRun(f.ctx, p)
		ok(t, err)
		check(t, resumed, "a due run was not resumed")
		what := fmt.Sprintf("resume with window %d", tc.window)
		equal(t, what+": journal from", rc.JournalFrom, 1)
		equal(t, what+": entries", len(rc.Journal), tc.entries)
		equal(t, what+": more", rc.JournalMore, tc.more)
		equalSteps(t, what, rc.Journal, whole, 1)
		if tc.more {
			rest, more, err := f.s.JournalPage(f.ctx, rc.Lease, 1+len(rc.Journal), 10)
			ok(t, err)
			equal(t, what+": more after the rest", more, false)
			equalSteps(t, what+": the rest", rest, whole, 1+len(rc.Journal))
			equal(t, what+": the rest's length", len(rest), 5-tc.entries)
		}
		ok(t, f.s.Suspend(f.ctx, rc.Lease, nil, ptr(f.now().Add(-time.Millisecond))))
	}
}
