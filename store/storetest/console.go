package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

// The reads behind the web console: listing by version and idempotency key, counts that
// follow a listing's filters, a journal read a page at a time and a run's lease holder.
var consoleTests = []test{
	{"ListByVersionAndKey", testConsoleListByVersionAndKey},
	{"CountsFollowTheFilters", testConsoleCountsFollowTheFilters},
	{"StepsFrom", testConsoleStepsFrom},
	{"LeaseHolder", testConsoleLeaseHolder},
}

func runIDs(runs []store.Run) []string {
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}

func testConsoleListByVersionAndKey(t *testing.T, f *fixture) {
	d2 := f.putModule(f.tenant, []byte("module-v2"), false, wf(wfName, "v2")).Digest
	a := f.runOf(f.tenant, wfName, "v1", f.digest, "key-a")
	b := f.runOf(f.tenant, wfName, "v2", d2, "key-b")
	c := f.runOf(f.tenant, wfName, "v2", d2, "")
	list := func(fl store.RunFilter) []string {
		t.Helper()
		runs, _, err := f.s.ListRuns(f.ctx, f.tenant, fl)
		ok(t, err)
		return runIDs(runs)
	}
	deepEqual(t, "version v2", list(store.RunFilter{Version: "v2"}), []string{c.ID, b.ID})
	deepEqual(t, "version v1 of the workflow", list(store.RunFilter{Workflow: wfName, Version: "v1"}), []string{a.ID})
	deepEqual(t, "key key-b", list(store.RunFilter{IdempotencyKey: "key-b"}), []string{b.ID})
	deepEqual(t, "key key-a and version v2", list(store.RunFilter{IdempotencyKey: "key-a", Version: "v2"}), []string(nil))
	deepEqual(t, "an unknown version", list(store.RunFilter{Version: "v9"}), []string(nil))

	// Another tenant's run with the same key is not listed.
	other := "tenant-" + randomHex(4)
	ok(t, f.s.EnsureTenant(f.ctx, other))
	od := f.putModule(other, []byte("module-v1"), false, wf(wfName, "v1")).Digest
	f.runOf(other, wfName, "v1", od, "key-a")
	deepEqual(t, "key key-a, own tenant", list(store.RunFilter{IdempotencyKey: "key-a"}), []string{a.ID})
}

func testConsoleCountsFollowTheFilters(t *testing.T, f *fixture) {
	d2 := f.putModule(f.tenant, []byte("module-v2"), false, wf(wfName, "v2")).Digest
	a := f.runOf(f.tenant, wfName, "v1", f.digest, "key-a")
	f.runOf(f.tenant, wfName, "v2", d2, "key-b")
	f.pass(5 * time.Millisecond)
	mid := f.now()
	f.pass(5 * time.Millisecond)
	f.runOf(f.tenant, wfName, "v2", d2, "")
	_, err := f.s.CancelRun(f.ctx, f.tenant, a.ID)
	ok(t, err)
	count := func(fl store.RunFilter) map[store.RunStatus]int {
		t.Helper()
		n, err := f.s.CountRuns(f.ctx, f.tenant, fl)
		ok(t, err)
		return n
	}
	deepEqual(t, "all", count(store.RunFilter{}), map[store.RunStatus]int{store.StatusPending: 2, store.StatusCancelled: 1})
	deepEqual(t, "version v2", count(store.RunFilter{Version: "v2"}), map[store.RunStatus]int{store.StatusPending: 2})
	deepEqual(t, "key key-a", count(store.RunFilter{IdempotencyKey: "key-a"}), map[store.RunStatus]int{store.StatusCancelled: 1})
	deepEqual(t, "since", count(store.RunFilter{Since: mid}), map[store.RunStatus]int{store.StatusPending: 1})
	deepEqual(t, "until", count(store.RunFilter{Until: mid}), map[store.RunStatus]int{store.StatusPending: 1, store.StatusCancelled: 1})
	deepEqual(t, "input", count(store.RunFilter{Input: json.RawMessage(`{"n":1}`)}), map[store.RunStatus]int{store.StatusPending: 2, store.StatusCancelled: 1})
	deepEqual(t, "input matching nothing", count(store.RunFilter{Input: json.RawMessage(`{"n":2}`)}), map[store.RunStatus]int{})
	deepEqual(t, "another workflow", count(store.RunFilter{Workflow: "other"}), map[store.RunStatus]int{})
	// Status, Cursor and Limit are the listing's page, not its selection: they are not read.
	deepEqual(t, "status, cursor and limit", count(store.RunFilter{Status: store.StatusFailed, Limit: 1}),
		map[store.RunStatus]int{store.StatusPending: 2, store.StatusCancelled: 1})
}

func testConsoleStepsFrom(t *testing.T, f *fixture) {
	c := f.committed(5)
	id := c.Run.ID
	whole := f.steps(id)
	for _, tc := range []struct{ from, limit, want int }{{0, 2, 2}, {2, 2, 2}, {4, 2, 1}, {5, 2, 0}, {0, 100, 5}, {3, 1, 1}} {
		got, err := f.s.ListStepsFrom(f.ctx, f.tenant, id, tc.from, tc.limit)
		ok(t, err)
		equal(t, "entries", len(got), tc.want)
		equalSteps(t, "page", got, whole, tc.from)
	}
	empty := f.run()
	got, err := f.s.ListStepsFrom(f.ctx, f.tenant, empty.ID, 0, 10)
	ok(t, err)
	equal(t, "entries of a run with none", len(got), 0)
	for _, runID := range []string{"00000000-0000-0000-0000-000000000000", "not-a-uuid"} {
		_, err = f.s.ListStepsFrom(f.ctx, f.tenant, runID, 0, 10)
		check(t, errors.Is(err, store.ErrNotFound), "steps of unknown run %q: %v, want not found", runID, err)
	}
	_, err = f.s.ListStepsFrom(f.ctx, "tenant-"+randomHex(4), id, 0, 10)
	check(t, errors.Is(err, store.ErrNotFound), "steps of another tenant's run: %v, want not found", err)
}

func testConsoleLeaseHolder(t *testing.T, f *fixture) {
	r := f.run()
	owner, expires, err := f.s.RunLease(f.ctx, f.tenant, r.ID)
	ok(t, err)
	check(t, owner == "" && expires == nil, "a pending run's lease: %q until %v", owner, expires)
	c := f.claim(r.ID, longLease)
	owner, expires, err = f.s.RunLease(f.ctx, f.tenant, r.ID)
	ok(t, err)
	equal(t, "the holder", owner, "test")
	check(t, expires != nil && expires.After(f.now()), "a held lease ends at %v, before now", expires)
	ok(t, f.s.Release(f.ctx, c.Lease))
	owner, expires, err = f.s.RunLease(f.ctx, f.tenant, r.ID)
	ok(t, err)
	check(t, owner == "" && expires == nil, "a released run's lease: %q until %v", owner, expires)
	for _, runID := range []string{"00000000-0000-0000-0000-000000000000", "not-a-uuid"} {
		_, _, err = f.s.RunLease(f.ctx, f.tenant, runID)
		check(t, errors.Is(err, store.ErrNotFound), "lease of unknown run %q: %v, want not found", runID, err)
	}
	_, _, err = f.s.RunLease(f.ctx, "tenant-"+randomHex(4), r.ID)
	check(t, errors.Is(err, store.ErrNotFound), "lease of another tenant's run: %v, want not found", err)
}
