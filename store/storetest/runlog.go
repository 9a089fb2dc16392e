package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var runLogTests = []test{
	{"EveryKindWhenItHappens", testLogKinds},
	{"LeasedStartIsOneEntry", testLogLeasedStart},
	{"EndsCancelsAndUpgrades", testLogEnds},
	{"UpgradeGateMoves", testLogUpgradeGate},
	{"RestartLogsNoCopiedEntries", testLogRestart},
	{"PagesAndTenancy", testLogPages},
	{"AppendOnlyAndSweptWithTheRun", testLogAppendOnlyAndSwept},
	{"OneRowForALeasedOneStepRun", testLogOneRow},
	{"GuestLogKeptApartBoundedAndSwept", testGuestLog},
	{"GuestLogKeptWithTheEnd", testGuestLogWithTheEnd},
}

// LogRows is what a store's test build gives the RunLog tests, to look at its run_log table
// where no store.Store method shows it: a swept run's rows must be gone, and no statement
// may change a row. Every store the suite runs on must implement it (in a _test.go file).
type LogRows interface {
	// RunLogRows counts the run's rows in run_log, whether or not the run still exists.
	RunLogRows(ctx context.Context, runID string) (int, error)
	// TamperRunLog tries to change the run's log rows (an UPDATE) and returns its error.
	TamperRunLog(ctx context.Context, runID string) error
}

// logOf reads the run's whole log, a page of 2 at a time, so the paging is exercised too.
func (f *fixture) logOf(runID string) []store.LogEntry {
	f.t.Helper()
	var all []store.LogEntry
	var after int64
	for {
		page, err := f.s.ListRunLog(f.ctx, f.tenant, runID, after, 2)
		ok(f.t, err)
		all = append(all, page...)
		if len(page) < 2 {
			return all
		}
		after = page[len(page)-1].Seq
	}
}

// kinds is the kinds of entries, in order, and checks that Seq grows.
func kinds(t *testing.T, log []store.LogEntry) string {
	t.Helper()
	out := make([]string, len(log))
	for i, e := range log {
		out[i] = string(e.Kind)
		if i > 0 && e.Seq <= log[i-1].Seq {
			t.Errorf("entry %d (%s) has seq %d after %d", i, e.Kind, e.Seq, log[i-1].Seq)
		}
		if e.At.IsZero() {
			t.Errorf("entry %d (%s) has no time", i, e.Kind)
		}
	}
	return strings.Join(out, " ")
}

// detail decodes an entry's detail object.
func detail(t *testing.T, e store.LogEntry) map[string]any {
	t.Helper()
	m := map[string]any{}
	if e.Detail != nil {
		ok(t, json.Unmarshal(e.Detail, &m))
	}
	return m
}

func runStep(runID string, seq int, key string, status store.StepStatus, attempt int, at time.Time) store.Step {
	s := store.Step{RunID: runID, Seq: seq, Key: key, Kind: store.KindRun, Status: status, Attempt: attempt, StartedAt: at}
	if status == store.StepCompleted {
		s.Output, s.CompletedAt = json.RawMessage(`1`), &at
	}
	return s
}

// testLogKinds walks one run through every activation change and checks that each writes
// its entry, and that successful steps write none.
func testLogKinds(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	// Successful steps: nothing.
	ok(t, f.s.CommitStep(f.ctx, c.Lease, runStep(r.ID, 0, "a", store.StepCompleted, 1, f.now()), longLease))
	equal(t, "log after a step", kinds(t, f.logOf(r.ID)), "created claimed")

	// A failed attempt, retried after a backoff: step_retrying, then suspended (why retry).
	retryAt := f.now().Add(200 * time.Millisecond)
	retrying := runStep(r.ID, 1, "b", store.StepRetrying, 1, f.now())
	retrying.Error, retrying.WakeAt = &abi.ErrorInfo{Code: "E_FLAKY", Message: "flaky"}, &retryAt
	ok(t, f.s.Suspend(f.ctx, c.Lease, &retrying, &retryAt))
	f.pass(250 * time.Millisecond)
	c = f.claim(r.ID, longLease)
	// The last attempt fails for good: step_failed.
	failed := runStep(r.ID, 1, "b", store.StepFailed, 2, f.now())
	failed.Error, failed.CompletedAt = &abi.ErrorInfo{Code: "E_FLAKY", Message: "flaky again"}, ptr(f.now())
	ok(t, f.s.CommitStep(f.ctx, c.Lease, failed, longLease))
	// A sleep, held back with the step before it: suspended (why sleep).
	wake := f.now().Add(200 * time.Millisecond)
	ok(t, f.s.CommitAndSuspend(f.ctx, c.Lease, runStep(r.ID, 2, "c", store.StepCompleted, 1, f.now()),
		store.Step{RunID: r.ID, Seq: 3, Key: "nap", Kind: store.KindSleep, Status: store.StepSleeping, WakeAt: &wake, StartedAt: f.now()}, &wake))
	f.pass(250 * time.Millisecond)
	c = f.claim(r.ID, longLease)
	ok(t, f.s.CommitStep(f.ctx, c.Lease, store.Step{RunID: r.ID, Seq: 3, Key: "nap", Kind: store.KindSleep, Status: store.StepCompleted,
		WakeAt: &wake, StartedAt: f.now(), CompletedAt: &wake}, longLease))
	// A wait with no event: suspended (why wait, until an event); a signal delivers one and
	// wakes the run.
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 4, "w", "ping", "", nil)) == nil, "resolved with nothing sent")
	check(t, f.sendSignal(r.ID), "the signal did not resolve the wait")
	c = f.claim(r.ID, longLease)
	// A wait that times out.
	timeout := f.now().Add(200 * time.Millisecond) // ahead of the store's clock when ReachWait runs
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 5, "w2", "never", "", &timeout)) == nil, "resolved with nothing sent")
	f.pass(250 * time.Millisecond)
	c = f.claim(r.ID, longLease)
	_, err := f.s.TimeoutWait(f.ctx, c.Lease, "w2", f.now(), longLease)
	ok(t, err)
	// Handed back: released, then faulted.
	ok(t, f.s.Release(f.ctx, c.Lease))
	c = f.claim(r.ID, longLease)
	ok(t, f.s.Fault(f.ctx, c.Lease, "the module could not be loaded", f.now()))
	c = f.claim(r.ID, longLease)
	_, err = f.s.RequestCancel(f.ctx, f.tenant, r.ID, f.now().Add(time.Minute))
	ok(t, err)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))

	log := f.logOf(r.ID)
	equal(t, "log", kinds(t, log), "created claimed step_retrying suspended claimed step_failed suspended claimed suspended "+
		"event_delivered woken claimed suspended claimed wait_timed_out released claimed faulted claimed cancel_requested ended")
	byKind := map[store.LogKind][]store.LogEntry{}
	for _, e := range log {
		byKind[e.Kind] = append(byKind[e.Kind], e)
		if e.RunID != r.ID {
			t.Errorf("%s entry of run %q", e.Kind, e.RunID)
		}
	}
	for _, e := range byKind[store.LogClaimed] {
		equal(t, "claimed host", e.Host, "test")
	}
	equal(t, "created host of a pending run", byKind[store.LogCreated][0].Host, "")
	equal(t, "first claim's activation", detail(t, byKind[store.LogClaimed][0])["activation"], any(1.0))
	retry := detail(t, byKind[store.LogStepRetrying][0])
	check(t, retry["step"] == "b" && retry["attempt"] == 1.0 && retry["code"] == "E_FLAKY" && retry["until"] != nil,
		"step_retrying detail %v", retry)
	why := []string{}
	for _, e := range byKind[store.LogSuspended] {
		d := detail(t, e)
		why = append(why, d["why"].(string)+":"+d["step"].(string))
		equal(t, "suspended host", e.Host, "test")
	}
	equal(t, "suspensions", strings.Join(why, " "), "retry:b sleep:nap wait:w wait:w2")
	until, err := time.Parse(time.RFC3339Nano, detail(t, byKind[store.LogSuspended][1])["until"].(string))
	ok(t, err)
	equalTime(t, "sleep's until", &until, &wake)
	_, has := detail(t, byKind[store.LogSuspended][2])["until"]
	check(t, !has, "a wait without a timeout suspended until %v", detail(t, byKind[store.LogSuspended][2]))
	failedDetail := detail(t, byKind[store.LogStepFailed][0])
	check(t, failedDetail["attempt"] == 2.0 && failedDetail["message"] == "flaky again", "step_failed detail %v", failedDetail)
	delivered := detail(t, byKind[store.LogEventDelivered][0])
	check(t, delivered["step"] == "w" && delivered["event"] == "ping", "event_delivered detail %v", delivered)
	equal(t, "timed out step", detail(t, byKind[store.LogWaitTimedOut][0])["step"], any("w2"))
	equal(t, "fault reason", detail(t, byKind[store.LogFaulted][0])["reason"], any("the module could not be loaded"))
	check(t, detail(t, byKind[store.LogCancelRequested][0])["graceUntil"] != nil, "cancel_requested without its grace")
	ended := byKind[store.LogEnded][0]
	equal(t, "ended status", detail(t, ended)["status"], any("completed"))
	equal(t, "ended host", ended.Host, "test")
}

// A run a host creates already leased is created and claimed in one entry; a 1-step run
// then costs one more, its end.
func testLogLeasedStart(t *testing.T, f *fixture) {
	c, created, err := f.s.CreateLeasedRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Input: json.RawMessage(`{}`)},
		store.LeaseTo{Owner: "host-a", LeaseFor: longLease, Reserve: 1})
	ok(t, err)
	check(t, created && c.Lease.Epoch == 1, "created %v, lease %+v", created, c.Lease)
	ok(t, f.s.CommitAndFinish(f.ctx, c.Lease, runStep(c.Run.ID, 0, "only", store.StepCompleted, 1, f.now()), store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	log := f.logOf(c.Run.ID)
	equal(t, "log", kinds(t, log), "created ended")
	equal(t, "created host", log[0].Host, "host-a")
	equal(t, "created and claimed", detail(t, log[0])["claimed"], any(true))
	equal(t, "ended host", log[1].Host, "host-a")

	// Without a free slot the run is created pending: no claim in its entry.
	p, _, err := f.s.CreateLeasedRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Input: json.RawMessage(`{}`)},
		store.LeaseTo{})
	ok(t, err)
	log = f.logOf(p.Run.ID)
	equal(t, "pending start's log", kinds(t, log), "created")
	equal(t, "pending start's host", log[0].Host, "")
	_, claimed := detail(t, log[0])["claimed"]
	check(t, !claimed, "a pending start's entry says claimed: %s", log[0].Detail)
}

// A failed run, a cancelled one, a nondeterministic one revived by a hotfix deploy.
func testLogEnds(t *testing.T, f *fixture) {
	failed := f.run()
	c := f.claim(failed.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusFailed, nil, &abi.ErrorInfo{Code: "E_BOOM", Message: "boom"}, nil))
	log := f.logOf(failed.ID)
	equal(t, "failed run's log", kinds(t, log), "created claimed ended")
	d := detail(t, log[2])
	check(t, d["status"] == "failed" && d["code"] == "E_BOOM", "ended detail %v", d)

	cancelled := f.run()
	c = f.claim(cancelled.ID, longLease)
	later := f.now().Add(time.Hour)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, &later))
	_, err := f.s.CancelRun(f.ctx, f.tenant, cancelled.ID)
	ok(t, err)
	log = f.logOf(cancelled.ID)
	// Suspended with no unfinished entry (nothing journaled): handed back, not suspended.
	equal(t, "cancelled run's log", kinds(t, log), "created claimed released ended")
	d = detail(t, log[3])
	check(t, d["status"] == "cancelled" && d["code"] == abi.CodeCancelled, "ended detail %v", d)
	equal(t, "a cancel of a run no host holds has no host", log[3].Host, "")

	nd := f.run()
	c = f.claim(nd.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusNondeterministic, nil, &abi.ErrorInfo{Code: "E_NONDET", Message: "step order changed"}, nil))
	f.putModule(f.tenant, []byte("module-v1-hotfix"), true, wf(wfName, "v1"))
	log = f.logOf(nd.ID)
	equal(t, "nondeterministic run's log", kinds(t, log), "created claimed nondeterministic upgraded")
	equal(t, "nondeterministic message", detail(t, log[2])["message"], any("step order changed"))
	equal(t, "upgraded to", detail(t, log[3])["version"], any("v1"))
	check(t, detail(t, log[3])["digest"] != f.digest, "upgraded detail %v names the old digest", detail(t, log[3]))

	// Continue-as-new: the old run ends continued, the new one's log starts naming it.
	c = f.claim(nd.ID, longLease) // the revived run, claimable again, out of the way
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	loop := f.run()
	c = f.claim(loop.ID, longLease)
	next, err := f.s.FinishAndContinue(f.ctx, c.Lease, ptr(f.runStep(loop.ID, 0, "tick")), store.StatusContinued, nil, nil, f.next(c.Run, `{"turn":1}`, 1), nil)

	ok(t, err)
	log = f.logOf(loop.ID)
	equal(t, "continued run's log", kinds(t, log), "created claimed ended")
	equal(t, "ended as", detail(t, log[2])["status"], any("continued"))
	log = f.logOf(next.ID)
	equal(t, "continuing run's log", kinds(t, log), "created")
	equal(t, "continued from", detail(t, log[0])["continuedFrom"], any(loop.ID))
}

// The upgrade gate moving a run to another version logs it, from and to.
func testLogUpgradeGate(t *testing.T, f *fixture) {
	r := f.run()
	v2 := module(f.tenant, []byte("v2 code for the log"))
	decl := wf(wfName, "v2")
	decl.TenantID, decl.Digest = f.tenant, v2.Digest
	_, moved, err := f.s.UpgradeModule(f.ctx, v2, []store.Workflow{decl}, false,
		[]store.RunMove{{RunID: r.ID, From: f.digest, Entries: 0, Version: "v2"}})
	ok(t, err)
	equal(t, "moved", len(moved), 1)
	log := f.logOf(r.ID)
	equal(t, "moved run's log", kinds(t, log), "created upgraded")
	d := detail(t, log[1])
	check(t, d["from"] == "v1" && d["version"] == "v2" && d["digest"] == v2.Digest, "upgraded detail %v", d)
	equal(t, "no host moved it", log[1].Host, "")
}

// A restart's new run starts its own log (created, naming the run it restarts); the journal
// it copies is the source's history, kept in the source's log, not logged again.
func testLogRestart(t *testing.T, f *fixture) {
	src := f.run()
	c := f.claim(src.ID, longLease)
	failed := runStep(src.ID, 1, "b", store.StepFailed, 1, f.now())
	failed.Error, failed.CompletedAt = &abi.ErrorInfo{Code: "E", Message: "no"}, ptr(f.now())
	ok(t, f.s.CommitStep(f.ctx, c.Lease, runStep(src.ID, 0, "a", store.StepCompleted, 1, f.now()), longLease))
	ok(t, f.s.CommitStep(f.ctx, c.Lease, failed, longLease))
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusFailed, nil, &abi.ErrorInfo{Code: "E", Message: "no"}, nil))
	next, err := f.s.RestartRun(f.ctx, src.ID, 2, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
		Input: json.RawMessage(`{}`), RetentionDays: 7})
	ok(t, err)
	equal(t, "copied entries", len(f.steps(next.ID)), 2)
	log := f.logOf(next.ID)
	equal(t, "restarted run's log", kinds(t, log), "created")
	equal(t, "restarted from", detail(t, log[0])["restartedFrom"], any(src.ID))
	equal(t, "source's log", kinds(t, f.logOf(src.ID)), "created claimed step_failed ended")
}

// Pages follow the cursor; another tenant's or an unknown run is not found.
func testLogPages(t *testing.T, f *fixture) {
	r := f.run()
	for range 3 {
		c := f.claim(r.ID, longLease)
		ok(t, f.s.Release(f.ctx, c.Lease))
	}
	all, err := f.s.ListRunLog(f.ctx, f.tenant, r.ID, 0, store.MaxLogPage)
	ok(t, err)
	equal(t, "log", kinds(t, all), "created claimed released claimed released claimed released")
	page, err := f.s.ListRunLog(f.ctx, f.tenant, r.ID, all[2].Seq, 3)
	ok(t, err)
	check(t, len(page) == 3 && page[0].Seq == all[3].Seq && page[2].Seq == all[5].Seq, "page after entry 2: %v", page)
	rest, err := f.s.ListRunLog(f.ctx, f.tenant, r.ID, all[len(all)-1].Seq, 10)
	ok(t, err)
	equal(t, "entries after the last", len(rest), 0)

	_, err = f.s.ListRunLog(f.ctx, "someone-else", r.ID, 0, 10)
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.ListRunLog(f.ctx, f.tenant, "00000000-0000-4000-8000-000000000000", 0, 10)
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.ListRunLog(f.ctx, f.tenant, "not-a-run-id\xff", 0, 10)
	wantErr(t, err, store.ErrNotFound)
	for _, limit := range []int{0, -1, store.MaxLogPage + 1} {
		_, err = f.s.ListRunLog(f.ctx, f.tenant, r.ID, 0, limit)
		check(t, err != nil && !errors.Is(err, store.ErrNotFound), "limit %d: %v, want an error", limit, err)
	}
}

// No statement changes a log row; the sweeper deletes a run's rows with the run.
func testLogAppendOnlyAndSwept(t *testing.T, f *fixture) {
	rows, isRows := f.s.(LogRows)
	if !isRows {
		t.Fatalf("%T does not implement storetest.LogRows in its test build", f.s)
	}
	mk := func(retention int) store.Run {
		r, _, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
			Input: json.RawMessage(`{}`), RetentionDays: retention})
		ok(t, err)
		return r
	}
	gone, kept := mk(0), mk(30)
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claims", len(claims), 2)
	for _, c := range claims {
		ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	}
	err = rows.TamperRunLog(f.ctx, gone.ID)
	check(t, err != nil && strings.Contains(err.Error(), "append-only"), "an UPDATE of run_log: %v, want it refused", err)
	equal(t, "log untouched", kinds(t, f.logOf(gone.ID)), "created claimed ended")

	f.pass(2 * time.Millisecond)
	n, err := f.s.SweepExpired(f.ctx, 100)
	ok(t, err)
	equal(t, "swept", n, 1)
	left, err := rows.RunLogRows(f.ctx, gone.ID)
	ok(t, err)
	equal(t, "log rows of a swept run", left, 0)
	_, err = f.s.ListRunLog(f.ctx, f.tenant, gone.ID, 0, 10)
	wantErr(t, err, store.ErrNotFound)
	equal(t, "kept run's log", kinds(t, f.logOf(kept.ID)), "created claimed ended")
}

// A leased start and its 1-step run's end write one row between them (the end's): the
// created entry is read from the run, whose columns it shows no later write changes, so it
// reads the same after the run changed hands, and stays first.
func testLogOneRow(t *testing.T, f *fixture) {
	rows, isRows := f.s.(LogRows)
	if !isRows {
		t.Fatalf("%T does not implement storetest.LogRows in its test build", f.s)
	}
	c, created, err := f.s.CreateLeasedRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Input: json.RawMessage(`{}`)},
		store.LeaseTo{Owner: "host-a", LeaseFor: longLease})
	ok(t, err)
	check(t, created, "not created")
	ok(t, f.s.CommitAndFinish(f.ctx, c.Lease, runStep(c.Run.ID, 0, "only", store.StepCompleted, 1, f.now()), store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	n, err := rows.RunLogRows(f.ctx, c.Run.ID)
	ok(t, err)
	equal(t, "run_log rows of a leased 1-step run", n, 1)
	equal(t, "its log", kinds(t, f.logOf(c.Run.ID)), "created ended")

	// Handed back by host-a and claimed by another: the created entry is still host-a's.
	c, _, err = f.s.CreateLeasedRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Input: json.RawMessage(`{}`)},
		store.LeaseTo{Owner: "host-a", LeaseFor: longLease})
	ok(t, err)
	ok(t, f.s.Release(f.ctx, c.Lease))
	f.claim(c.Run.ID, longLease)
	log := f.logOf(c.Run.ID)
	equal(t, "log of a run that changed hands", kinds(t, log), "created released claimed")
	equal(t, "created host", log[0].Host, "host-a")
	equal(t, "created and claimed", detail(t, log[0])["claimed"], any(true))
	check(t, log[0].Seq < log[1].Seq, "the created entry (seq %d) is not first (next %d)", log[0].Seq, log[1].Seq)
	page, err := f.s.ListRunLog(f.ctx, f.tenant, c.Run.ID, log[0].Seq, 10)
	ok(t, err)
	equal(t, "entries after the created one", kinds(t, page), "released claimed")
}

// A run's guest log: lines kept in order with their fields, apart from the lifecycle log,
// paged, bounded by lines and by bytes (the oldest kept), scoped to the tenant, and swept with
// the run.
func testGuestLog(t *testing.T, f *fixture) {
	rows, isRows := f.s.(LogRows)
	if !isRows {
		t.Fatalf("%T does not implement storetest.LogRows in its test build", f.s)
	}
	r := f.run()
	at := f.now().Truncate(time.Microsecond)
	lines := []store.GuestLogLine{
		{At: at, Level: "info", Message: "hello ünïcode \u2028 <b>", Step: ""},
		{At: at.Add(time.Millisecond), Level: "warn", Message: "from a step", Stream: "stderr", Step: "send-welcome#1"},
	}
	kept, err := f.s.AppendGuestLog(f.ctx, f.tenant, r.ID, lines)
	ok(t, err)
	equal(t, "kept", kept, 2)
	kept, err = f.s.AppendGuestLog(f.ctx, f.tenant, r.ID, nil)
	ok(t, err)
	equal(t, "kept of none", kept, 0)
	got, err := f.s.ListGuestLog(f.ctx, f.tenant, r.ID, 0, 10)
	ok(t, err)
	equal(t, "lines", len(got), 2)
	for i, l := range got {
		l.Seq = 0
		check(t, l.At.Equal(lines[i].At), "line %d at %v, want %v", i, l.At, lines[i].At)
		l.At = lines[i].At
		equal(t, "line", l, lines[i])
	}
	check(t, got[1].Seq > got[0].Seq, "seqs %d, %d", got[0].Seq, got[1].Seq)
	page, err := f.s.ListGuestLog(f.ctx, f.tenant, r.ID, got[0].Seq, 10)
	ok(t, err)
	check(t, len(page) == 1 && page[0].Seq == got[1].Seq, "page after the first: %v", page)
	// The lifecycle log does not list them.
	equal(t, "lifecycle log", kinds(t, f.logOf(r.ID)), "created")

	// Bounded by lines: the oldest are kept, the rest dropped.
	many := make([]store.GuestLogLine, store.MaxGuestLogLines)
	for i := range many {
		many[i] = store.GuestLogLine{At: at, Level: "info", Message: fmt.Sprintf("line %d", i)}
	}
	kept, err = f.s.AppendGuestLog(f.ctx, f.tenant, r.ID, many)
	ok(t, err)
	equal(t, "kept up to the line bound", kept, store.MaxGuestLogLines-2)
	kept, err = f.s.AppendGuestLog(f.ctx, f.tenant, r.ID, many[:1])
	ok(t, err)
	equal(t, "kept past the line bound", kept, 0)
	all, err := f.s.ListGuestLog(f.ctx, f.tenant, r.ID, 0, store.MaxLogPage)
	ok(t, err)
	equal(t, "lines kept", len(all), store.MaxGuestLogLines)
	equal(t, "the last kept", all[len(all)-1].Message, fmt.Sprintf("line %d", store.MaxGuestLogLines-3))

	// Bounded by bytes: a line that would pass the bound is dropped, and so are those after it.
	big, _, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
		Input: json.RawMessage(`{}`), RetentionDays: 0})
	ok(t, err)
	line := strings.Repeat("x", 4096)
	var lots []store.GuestLogLine
	for range store.MaxGuestLogBytes/4096 + 2 {
		lots = append(lots, store.GuestLogLine{At: at, Level: "info", Message: line})
	}
	kept, err = f.s.AppendGuestLog(f.ctx, f.tenant, big.ID, lots)
	ok(t, err)
	equal(t, "kept up to the byte bound", kept, store.MaxGuestLogBytes/4096)

	// Another tenant's run, or none, is not found.
	_, err = f.s.AppendGuestLog(f.ctx, "someone-else", r.ID, lines)
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.ListGuestLog(f.ctx, "someone-else", r.ID, 0, 10)
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.AppendGuestLog(f.ctx, f.tenant, "00000000-0000-4000-8000-000000000000", lines)
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.ListGuestLog(f.ctx, f.tenant, "not-a-run-id\xff", 0, 10)
	wantErr(t, err, store.ErrNotFound)
	for _, limit := range []int{0, -1, store.MaxLogPage + 1} {
		_, err = f.s.ListGuestLog(f.ctx, f.tenant, r.ID, 0, limit)
		check(t, err != nil && !errors.Is(err, store.ErrNotFound), "limit %d: %v, want an error", limit, err)
	}

	// Swept with the run.
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claims", len(claims), 2)
	for _, c := range claims {
		ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	}
	f.pass(2 * time.Millisecond)
	_, err = f.s.SweepExpired(f.ctx, 100)
	ok(t, err)
	left, err := rows.RunLogRows(f.ctx, big.ID)
	ok(t, err)
	equal(t, "log rows of a swept run", left, 0)
}

// A run's end keeps the lines its activation's guest logged in the same write, with the
// guest log's bounds, on every end (Finish, CommitAndFinish, FinishAndContinue); an end the
// fence refuses keeps none, and an end with no lines keeps nothing.
func testGuestLogWithTheEnd(t *testing.T, f *fixture) {
	at := f.now().Truncate(time.Microsecond)
	line := func(msg string) store.GuestLogLine {
		return store.GuestLogLine{At: at, Level: "info", Message: msg, Step: "a#1"}
	}
	messages := func(runID string) []string {
		t.Helper()
		got, err := f.s.ListGuestLog(f.ctx, f.tenant, runID, 0, store.MaxLogPage)
		ok(t, err)
		out := []string{}
		for _, l := range got {
			out = append(out, l.Message)
		}
		return out
	}

	// CommitAndFinish: after the lines already kept, in order, with their fields.
	r := f.run()
	c := f.claim(r.ID, longLease)
	kept, err := f.s.AppendGuestLog(f.ctx, f.tenant, r.ID, []store.GuestLogLine{line("before")})
	ok(t, err)
	equal(t, "kept before the end", kept, 1)
	// A stale lease's end keeps no line, and changes nothing.
	stale := c.Lease
	stale.Epoch--
	wantErr(t, f.s.CommitAndFinish(f.ctx, stale, f.runStep(r.ID, 0, "a"), store.StatusCompleted, json.RawMessage(`1`), nil,
		[]store.GuestLogLine{line("stale")}), store.ErrLeaseLost)
	wantErr(t, f.s.Finish(f.ctx, stale, store.StatusCompleted, json.RawMessage(`1`), nil, []store.GuestLogLine{line("stale")}), store.ErrLeaseLost)
	equal(t, "lines after stale ends", strings.Join(messages(r.ID), ","), "before")
	end := []store.GuestLogLine{line("one ünïcode"), {At: at.Add(time.Millisecond), Level: "warn", Message: "two", Stream: "stderr"}}
	ok(t, f.s.CommitAndFinish(f.ctx, c.Lease, f.runStep(r.ID, 0, "a"), store.StatusCompleted, json.RawMessage(`1`), nil, end))
	got, err := f.s.ListGuestLog(f.ctx, f.tenant, r.ID, 0, 10)
	ok(t, err)
	equal(t, "lines with the end", len(got), 3)
	for i, l := range got[1:] {
		check(t, l.At.Equal(end[i].At), "line %d at %v, want %v", i, l.At, end[i].At)
		l.Seq, l.At = 0, end[i].At
		equal(t, "line", l, end[i])
	}
	run, err := f.s.GetRun(f.ctx, f.tenant, r.ID)
	ok(t, err)
	equal(t, "status", run.Status, store.StatusCompleted)

	// Finish with no lines keeps none; Finish with lines past the bound keeps those that fit.
	r = f.run()
	c = f.claim(r.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusFailed, nil, &abi.ErrorInfo{Code: "boom", Message: "x"}, nil))
	equal(t, "lines of an end that logged none", len(messages(r.ID)), 0)
	r = f.run()
	c = f.claim(r.ID, longLease)
	many := make([]store.GuestLogLine, store.MaxGuestLogLines+5)
	for i := range many {
		many[i] = line(fmt.Sprintf("line %d", i))
	}
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, many))
	all := messages(r.ID)
	equal(t, "lines kept up to the bound", len(all), store.MaxGuestLogLines)
	equal(t, "the last kept", all[len(all)-1], fmt.Sprintf("line %d", store.MaxGuestLogLines-1))

	// FinishAndContinue: the ended run keeps them, the new run starts with none.
	r = f.run()
	c = f.claim(r.ID, longLease)
	next, err := f.s.FinishAndContinue(f.ctx, c.Lease, nil, store.StatusContinued, nil, nil, f.next(c.Run, `{}`, 1),
		[]store.GuestLogLine{line("last words")})
	ok(t, err)
	equal(t, "lines of the continued run", strings.Join(messages(r.ID), ","), "last words")
	equal(t, "lines of the run continuing it", len(messages(next.ID)), 0)
}
