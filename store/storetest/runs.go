package storetest

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var runTests = []test{
	{"CreateAndGet", testCreateAndGet},
	{"TriggeredBy", testTriggeredBy},
	{"DeadlineIsKept", testDeadlineIsKept},
	{"Idempotency", testIdempotency},
	{"ConcurrentIdempotency", testConcurrentIdempotency},
	{"UnknownAndMalformedIDs", testUnknownAndMalformedIDs},
	{"ListRunsPagination", testListRunsPagination},
	{"ListRunsFilters", testListRunsFilters},
	{"Cancel", testCancel},
	{"TenantScoping", testTenantScoping},
}

func testCreateAndGet(t *testing.T, f *fixture) {
	before := f.now().Add(-time.Second)
	r := f.run()
	check(t, len(r.ID) == 36, "run id %q is not a UUID", r.ID)
	equal(t, "status", r.Status, store.StatusPending)
	equal(t, "tenant", r.TenantID, f.tenant)
	equal(t, "workflow", r.Workflow, wfName)
	equal(t, "version", r.Version, "v1")
	equal(t, "digest", r.Digest, f.digest)
	equalJSON(t, "input", r.Input, `{"n":1}`)
	equal(t, "retention", r.RetentionDays, 7)
	equal(t, "activations", r.Activations, 0)
	check(t, r.AvailableAt != nil && r.AvailableAt.After(before), "a new run is available now, got %v", r.AvailableAt)
	check(t, r.CreatedAt.After(before), "created at %v", r.CreatedAt)
	check(t, r.StartedAt == nil && r.CompletedAt == nil, "a new run has no start or end")
	check(t, r.Output == nil && r.Error == nil, "a new run has no result")

	got := f.getRun(r.ID)
	equal(t, "stored id", got.ID, r.ID)
	equal(t, "stored status", got.Status, store.StatusPending)
	equalJSON(t, "stored input", got.Input, `{"n":1}`)
	check(t, got.CreatedAt.Equal(r.CreatedAt), "created at changed: %v, then %v", r.CreatedAt, got.CreatedAt)
	equal(t, "stored idempotency key", got.IdempotencyKey, "")
}

func testIdempotency(t *testing.T, f *fixture) {
	first := f.runOf(f.tenant, wfName, "v1", f.digest, "order-42")
	equal(t, "idempotency key", first.IdempotencyKey, "order-42")
	again, created, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1",
		Digest: f.digest, Input: json.RawMessage(`{"different":true}`), IdempotencyKey: "order-42"})
	ok(t, err)
	check(t, !created, "a reused idempotency key created a run")
	equal(t, "the existing run", again.ID, first.ID)
	equalJSON(t, "the existing input", again.Input, `{"n":1}`)

	// The key is scoped to the workflow and the tenant.
	f.putModule(f.tenant, []byte("other"), false, wf("other", "v1"))
	check(t, f.runOf(f.tenant, "other", "v1", f.digest, "order-42").ID != first.ID, "another workflow shared the key")
	other := "other-" + f.tenant
	ok(t, f.s.EnsureTenant(f.ctx, other))
	m := f.putModule(other, []byte("module-v1"), false, wf(wfName, "v1"))
	check(t, f.runOf(other, wfName, "v1", m.Digest, "order-42").ID != first.ID, "another tenant shared the key")
}

func testConcurrentIdempotency(t *testing.T, f *fixture) {
	const n = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		ids     = map[string]bool{}
		created int
		errs    []error
	)
	for range n {
		wg.Go(func() {
			r, c, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1",
				Digest: f.digest, Input: json.RawMessage(`{}`), IdempotencyKey: "once"})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			ids[r.ID] = true
			if c {
				created++
			}
		})
	}
	wg.Wait()
	check(t, len(errs) == 0, "concurrent creates failed: %v", errs)
	equal(t, "runs created", created, 1)
	equal(t, "distinct runs returned", len(ids), 1)
}

func testUnknownAndMalformedIDs(t *testing.T, f *fixture) {
	for _, id := range []string{"00000000-0000-4000-8000-000000000000", "not-a-uuid", "", "'; DROP TABLE runs; --"} {
		_, err := f.s.GetRun(f.ctx, f.tenant, id)
		wantErr(t, err, store.ErrNotFound)
		_, err = f.s.ListSteps(f.ctx, f.tenant, id)
		wantErr(t, err, store.ErrNotFound)
		_, err = f.s.CancelRun(f.ctx, f.tenant, id)
		wantErr(t, err, store.ErrNotFound)
		_, err = f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: id, Event: "e", Payload: json.RawMessage(`{}`), MaxBuffered: 10})
		wantErr(t, err, store.ErrNotFound)
	}
	// A stale lease on a run that does not exist is a lost lease, not a crash.
	err := f.s.CommitStep(f.ctx, store.Lease{RunID: "00000000-0000-4000-8000-000000000000", Epoch: 1},
		store.Step{Key: "a", Kind: store.KindRun, Status: store.StepCompleted, StartedAt: f.now()}, longLease)
	wantErr(t, err, store.ErrLeaseLost)
}

func testListRunsPagination(t *testing.T, f *fixture) {
	var made []string
	for range 23 {
		made = append(made, f.run().ID)
	}
	slices.Reverse(made) // newest first

	// The default page is 50.
	all, next, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{})
	ok(t, err)
	equal(t, "runs on a default page", len(all), 23)
	equal(t, "cursor after the last page", next, "")
	check(t, slices.Equal(ids(all), made), "default page order: got %v, want %v", ids(all), made)

	var (
		paged  []string
		cursor string
		pages  int
	)
	for {
		page, next, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{Limit: 10, Cursor: cursor})
		ok(t, err)
		pages++
		check(t, len(page) <= 10, "page of %d runs over the limit", len(page))
		paged = append(paged, ids(page)...)
		if pages == 1 {
			f.run() // newer runs must not shift later pages
		}
		if next == "" {
			break
		}
		check(t, pages < 10, "pagination does not end")
		cursor = next
	}
	equal(t, "pages", pages, 3)
	check(t, slices.Equal(paged, made), "paged order: got %v, want %v", paged, made)

	_, _, err = f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{Cursor: "garbage!"})
	wantErr(t, err, store.ErrNotFound)
}

func testListRunsFilters(t *testing.T, f *fixture) {
	f.putModule(f.tenant, []byte("other"), false, wf("other", "v1"))
	a1 := f.run()
	f.claim(a1.ID, longLease)
	b1 := f.runOf(f.tenant, "other", "v1", f.digest, "")
	a2 := f.run()
	_, err := f.s.CancelRun(f.ctx, f.tenant, b1.ID)
	ok(t, err)

	cases := []struct {
		filter store.RunFilter
		want   []string
	}{
		{store.RunFilter{Workflow: wfName}, []string{a2.ID, a1.ID}},
		{store.RunFilter{Workflow: "other"}, []string{b1.ID}},
		{store.RunFilter{Status: store.StatusRunning}, []string{a1.ID}},
		{store.RunFilter{Status: store.StatusCancelled}, []string{b1.ID}},
		{store.RunFilter{Workflow: wfName, Status: store.StatusPending}, []string{a2.ID}},
		{store.RunFilter{Workflow: "other", Status: store.StatusPending}, nil},
		{store.RunFilter{Workflow: "none"}, nil},
	}
	for _, tc := range cases {
		runs, next, err := f.s.ListRuns(f.ctx, f.tenant, tc.filter)
		ok(t, err)
		equal(t, "next cursor", next, "")
		check(t, slices.Equal(ids(runs), tc.want), "filter %+v: got %v, want %v", tc.filter, ids(runs), tc.want)
	}
}

func testCancel(t *testing.T, f *fixture) {
	pending := f.run()
	r, err := f.s.CancelRun(f.ctx, f.tenant, pending.ID)
	ok(t, err)
	equal(t, "status", r.Status, store.StatusCancelled)
	check(t, r.Error != nil && r.Error.Code == abi.CodeCancelled, "error: got %+v, want code %s", r.Error, abi.CodeCancelled)
	check(t, r.CompletedAt != nil, "a cancelled run has no completion time")
	check(t, r.AvailableAt == nil, "a cancelled run stays available at %v", r.AvailableAt)
	equal(t, "stored status", f.getRun(pending.ID).Status, store.StatusCancelled)
	f.noClaim()

	_, err = f.s.CancelRun(f.ctx, f.tenant, pending.ID)
	wantErr(t, err, store.ErrConflict)
	_, err = f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: pending.ID, Event: "e", Payload: json.RawMessage(`{}`), MaxBuffered: 10})
	wantErr(t, err, store.ErrConflict)

	// Cancelling a run that a host holds kills the lease.
	running := f.run()
	c := f.claim(running.ID, longLease)
	_, err = f.s.CancelRun(f.ctx, f.tenant, running.ID)
	ok(t, err)
	err = f.s.CommitStep(f.ctx, c.Lease, store.Step{RunID: running.ID, Key: "late", Kind: store.KindRun,
		Status: store.StepCompleted, StartedAt: f.now(), CompletedAt: ptr(f.now())}, longLease)
	wantErr(t, err, store.ErrLeaseLost)
	wantErr(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil), store.ErrLeaseLost)
	equal(t, "journal after a cancelled commit", len(f.steps(running.ID)), 0)
	r = f.getRun(running.ID)
	equal(t, "status after a late finish", r.Status, store.StatusCancelled)
	check(t, r.Output == nil, "a fenced finish wrote output %s", r.Output)
	f.noClaim()

	// A nondeterministic run is not terminal: it can be cancelled.
	stuck := f.run()
	c = f.claim(stuck.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusNondeterministic, nil, &abi.ErrorInfo{Code: abi.CodeNondeterministic, Message: "x"}, nil))
	r, err = f.s.CancelRun(f.ctx, f.tenant, stuck.ID)
	ok(t, err)
	equal(t, "cancelled nondeterministic run", r.Status, store.StatusCancelled)

	// Terminal runs of every kind refuse a cancel.
	done := f.run()
	c = f.claim(done.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusFailed, nil, &abi.ErrorInfo{Message: "boom"}, nil))
	_, err = f.s.CancelRun(f.ctx, f.tenant, done.ID)
	wantErr(t, err, store.ErrConflict)
	equal(t, "a failed run stays failed", f.getRun(done.ID).Status, store.StatusFailed)
}

func testTenantScoping(t *testing.T, f *fixture) {
	other := "intruder-" + f.tenant
	ok(t, f.s.EnsureTenant(f.ctx, other))
	r := f.run()

	_, err := f.s.GetRun(f.ctx, other, r.ID)
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.ListSteps(f.ctx, other, r.ID)
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.CancelRun(f.ctx, other, r.ID)
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.Signal(f.ctx, store.SignalParams{TenantID: other, RunID: r.ID, Event: "e", Payload: json.RawMessage(`{}`), MaxBuffered: 10})
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.GetModule(f.ctx, other, f.digest)
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.ResolveWorkflow(f.ctx, other, wfName, "")
	wantErr(t, err, store.ErrNotFound)

	runs, _, err := f.s.ListRuns(f.ctx, other, store.RunFilter{})
	ok(t, err)
	equal(t, "another tenant's runs", len(runs), 0)
	mods, err := f.s.ListModules(f.ctx, other)
	ok(t, err)
	equal(t, "another tenant's modules", len(mods), 0)
	wfs, err := f.s.ListWorkflows(f.ctx, other)
	ok(t, err)
	equal(t, "another tenant's workflows", len(wfs), 0)
	equal(t, "the run is untouched", f.getRun(r.ID).Status, store.StatusPending)

	// The same module bytes uploaded by another tenant are that tenant's own copy.
	m := f.putModule(other, []byte("module-v1"), false, wf(wfName, "v1"))
	equal(t, "same digest", m.Digest, f.digest)
	mods, err = f.s.ListModules(f.ctx, other)
	ok(t, err)
	equal(t, "the other tenant's own module", len(mods), 1)
	mods, err = f.s.ListModules(f.ctx, f.tenant)
	ok(t, err)
	equal(t, "the first tenant's modules", len(mods), 1)
}

func ids(runs []store.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// A run's deadline is kept as given, at microsecond precision, and every read of the run
// returns it: the create, a get, a claim and a listing.
func testDeadlineIsKept(t *testing.T, f *fixture) {
	deadline := f.now().Add(90 * time.Minute).Truncate(time.Microsecond)
	r, created, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
		Input: json.RawMessage(`{}`), RetentionDays: 7, Deadline: &deadline})
	ok(t, err)
	check(t, created, "not created")
	same := func(what string, got *time.Time) {
		t.Helper()
		check(t, got != nil && got.Equal(deadline), "%s: deadline %v, want %v", what, got, deadline)
	}
	same("create", r.Deadline)
	same("get", f.getRun(r.ID).Deadline)
	same("claim", f.claim(r.ID, longLease).Run.Deadline)
	runs, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{Limit: 10})
	ok(t, err)
	check(t, len(runs) == 1, "listed %d runs", len(runs))
	same("list", runs[0].Deadline)
	plain := f.run()
	check(t, plain.Deadline == nil, "a run started without a deadline has %v", plain.Deadline)
}
