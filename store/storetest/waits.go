package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var waitTests = []test{
	{"SignalBeforeWait", testSignalBeforeWait},
	{"SignalAfterWait", testSignalAfterWait},
	{"MatchIsSuperset", testMatchIsSuperset},
	{"SignalResolvesFirstWaitBySeq", testSignalResolvesFirstWaitBySeq},
	{"BufferLimit", testBufferLimit},
	{"TimeoutBeforeEvent", testTimeoutBeforeEvent},
	{"EventBeforeTimeout", testEventBeforeTimeout},
	{"ParkWait", testParkWait},
	{"SignalRacesWait", testSignalRacesWait},
	{"SignalIDDeliversOnce", testSignalIDDeliversOnce},
	{"SignalIDKeptOnce", testSignalIDKeptOnce},
	{"SignalIDRaces", testSignalIDRaces},
}

func signal(t *testing.T, f *fixture, runID, event, payload string) bool {
	t.Helper()
	delivered, err := deliveredOf(f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: runID, Event: event, Payload: json.RawMessage(payload), MaxBuffered: 100}))
	ok(t, err)
	return delivered
}

// reach calls ReachWait and fails the test on error.
func reach(t *testing.T, f *fixture, l store.Lease, s store.Step) *store.Step {
	t.Helper()
	got, err := f.s.ReachWait(f.ctx, l, s, longLease)
	ok(t, err)
	return got
}

func testSignalBeforeWait(t *testing.T, f *fixture) {
	r := f.run()
	check(t, !signal(t, f, r.ID, "approve", `{"ok":true,"by":"ann"}`), "a signal to a run that waits for nothing was delivered")
	c := f.claim(r.ID, longLease)
	w := f.waitStep(r.ID, 0, "approval", "approve", `{"ok":true}`, nil)
	got := reach(t, f, c.Lease, w)
	check(t, got != nil, "the buffered signal did not resolve the wait")
	want := w
	want.Status, want.Output, want.EventID = store.StepCompleted, json.RawMessage(`{"ok":true,"by":"ann"}`), got.EventID
	want.CompletedAt = got.CompletedAt
	check(t, got.EventID != nil && got.CompletedAt != nil, "a resolved wait has no event id or completion time: %+v", got)
	equalStep(t, *got, want)
	equalStep(t, f.step(r.ID, "approval"), want)

	// ReachWait kept the lease: the activation continues inline.
	ok(t, f.s.CommitStep(f.ctx, c.Lease, store.Step{RunID: r.ID, Seq: 1, Key: "next", Kind: store.KindRun,
		Status: store.StepCompleted, Attempt: 1, StartedAt: f.now(), CompletedAt: ptr(f.now())}, longLease))

	// The signal was consumed: a second wait for the same event finds nothing and parks the run.
	again := reach(t, f, c.Lease, f.waitStep(r.ID, 2, "approval#1", "approve", "", nil))
	check(t, again == nil, "a consumed signal resolved a second wait: %+v", again)
	equal(t, "parked wait", f.step(r.ID, "approval#1").Status, store.StepWaiting)
	check(t, f.getRun(r.ID).AvailableAt == nil, "a run waiting without timeout is available")
	f.noClaim()
}

func testSignalAfterWait(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	w := f.waitStep(r.ID, 0, "approval", "approve", "", nil)
	check(t, reach(t, f, c.Lease, w) == nil, "a wait with no event resolved")
	equalStep(t, f.step(r.ID, "approval"), w)
	f.noClaim()

	check(t, signal(t, f, r.ID, "approve", `{"a":1}`), "a signal to a waiting run was not delivered")
	got := f.getRun(r.ID)
	check(t, got.AvailableAt != nil && !got.AvailableAt.After(f.now().Add(time.Second)), "a resolved run is not available now: %v", got.AvailableAt)
	c = f.claim(r.ID, longLease)
	equal(t, "journal", len(c.Journal), 1)
	s := c.Journal[0]
	equal(t, "resolved status", s.Status, store.StepCompleted)
	equalJSON(t, "resolved output", s.Output, `{"a":1}`)
	check(t, s.CompletedAt != nil, "a resolved wait has no completion time")

	// With nothing waiting, the next signal is kept for the run.
	check(t, !signal(t, f, r.ID, "approve", `{"a":2}`), "a signal with no waiting step was delivered")
	got2 := reach(t, f, c.Lease, f.waitStep(r.ID, 1, "approval#1", "approve", "", nil))
	check(t, got2 != nil, "the kept signal was lost")
	equalJSON(t, "kept signal", got2.Output, `{"a":2}`)
}

func testMatchIsSuperset(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 0, "pick", "choice", `{"color":"red","dim":{"w":1}}`, nil)) == nil, "resolved with nothing sent")

	check(t, !signal(t, f, r.ID, "choice", `{"color":"blue","dim":{"w":1}}`), "a non-matching payload resolved the wait")
	check(t, !signal(t, f, r.ID, "other", `{"color":"red","dim":{"w":1}}`), "another event name resolved the wait")
	check(t, !signal(t, f, r.ID, "choice", `{"color":"red","dim":{"w":2}}`), "a nested mismatch resolved the wait")
	check(t, signal(t, f, r.ID, "choice", `{"color":"red","dim":{"w":1,"h":2},"extra":[1]}`), "a superset did not resolve the wait")
	equal(t, "resolved", f.step(r.ID, "pick").Status, store.StepCompleted)

	// The non-matching events stay buffered for later waits, oldest first.
	c = f.claim(r.ID, longLease)
	got := reach(t, f, c.Lease, f.waitStep(r.ID, 1, "blue", "choice", `{"color":"blue"}`, nil))
	check(t, got != nil, "a buffered non-matching event was lost")
	equalJSON(t, "buffered event", got.Output, `{"color":"blue","dim":{"w":1}}`)
	got = reach(t, f, c.Lease, f.waitStep(r.ID, 2, "any", "choice", `null`, nil))
	check(t, got != nil, "a null match did not match every payload")
	equalJSON(t, "oldest remaining event", got.Output, `{"color":"red","dim":{"w":2}}`)
	got = reach(t, f, c.Lease, f.waitStep(r.ID, 3, "other", "other", `{}`, nil))
	check(t, got != nil, "an empty match did not match")
	equalJSON(t, "other event", got.Output, `{"color":"red","dim":{"w":1}}`)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 4, "none", "choice", "", nil)) == nil, "an event was consumed twice")
}

func testSignalResolvesFirstWaitBySeq(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	w1 := f.waitStep(r.ID, 1, "second", "e", "", nil)
	w0 := f.waitStep(r.ID, 0, "first", "e", "", nil)
	ok(t, f.s.CommitStep(f.ctx, c.Lease, w1, longLease))
	ok(t, f.s.CommitStep(f.ctx, c.Lease, w0, longLease))
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, nil))

	check(t, signal(t, f, r.ID, "e", `1`), "not delivered")
	equal(t, "first wait", f.step(r.ID, "first").Status, store.StepCompleted)
	equal(t, "second wait", f.step(r.ID, "second").Status, store.StepWaiting)
	check(t, signal(t, f, r.ID, "e", `2`), "not delivered")
	equalJSON(t, "second wait output", f.step(r.ID, "second").Output, `2`)
	equalJSON(t, "first wait output", f.step(r.ID, "first").Output, `1`)
}

func testBufferLimit(t *testing.T, f *fixture) {
	r := f.run()
	other := f.run()
	for i := range 3 {
		delivered, err := deliveredOf(f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: r.ID, Event: "e", Payload: json.RawMessage(fmt.Sprint(i)), MaxBuffered: 3}))
		ok(t, err)
		check(t, !delivered, "delivered with nothing waiting")
	}
	_, err := f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: r.ID, Event: "e", Payload: json.RawMessage(`3`), MaxBuffered: 3})
	wantErr(t, err, store.ErrLimit)
	_, err = f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: r.ID, Event: "another", Payload: json.RawMessage(`3`), MaxBuffered: 3})
	wantErr(t, err, store.ErrLimit)
	// The bound is per run.
	_, err = f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: other.ID, Event: "e", Payload: json.RawMessage(`0`), MaxBuffered: 3})
	ok(t, err)
	_, err = f.s.CancelRun(f.ctx, f.tenant, other.ID)
	ok(t, err)

	// A delivered signal is not buffered, so the bound does not refuse it.
	c := f.claim(r.ID, longLease)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 0, "w", "direct", "", nil)) == nil, "resolved with nothing sent")
	delivered, err := deliveredOf(f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: r.ID, Event: "direct", Payload: json.RawMessage(`{}`), MaxBuffered: 3}))
	ok(t, err)
	check(t, delivered, "a signal to a waiting run was refused or buffered")

	// Consuming one buffered event makes room for one more; the refused one was not kept.
	c = f.claim(r.ID, longLease)
	for i := range 3 {
		got := reach(t, f, c.Lease, f.waitStep(r.ID, 1+i, fmt.Sprint("e", i), "e", "", nil))
		check(t, got != nil, "buffered event %d lost", i)
		equalJSON(t, "buffered event order", got.Output, fmt.Sprint(i))
		if i == 0 {
			_, err := f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: r.ID, Event: "late", Payload: json.RawMessage(`{}`), MaxBuffered: 3})
			ok(t, err)
		}
	}
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 4, "e3", "e", "", nil)) == nil, "a refused signal was kept")
}

func testTimeoutBeforeEvent(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	timeout := f.now().Add(-time.Millisecond)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 0, "w", "e", "", &timeout)) == nil, "resolved with nothing sent")
	equalTime(t, "a waiting run is available at its timeout", f.getRun(r.ID).AvailableAt, &timeout)

	c = f.claim(r.ID, longLease)
	equal(t, "journal", len(c.Journal), 1)
	equal(t, "journaled status", c.Journal[0].Status, store.StepWaiting)
	got, err := f.s.TimeoutWait(f.ctx, c.Lease, "w", timeout, longLease)
	ok(t, err)
	equal(t, "status", got.Status, store.StepTimedOut)
	equalJSON(t, "output", got.Output, abi.WaitTimeout)
	equalTime(t, "completed at", got.CompletedAt, &timeout)
	equalStep(t, f.step(r.ID, "w"), got)

	// The lease is kept, and a late event neither changes the step nor is lost.
	ok(t, f.s.CommitStep(f.ctx, c.Lease, store.Step{RunID: r.ID, Seq: 1, Key: "after", Kind: store.KindRun,
		Status: store.StepCompleted, Attempt: 1, StartedAt: f.now(), CompletedAt: ptr(f.now())}, longLease))
	check(t, !signal(t, f, r.ID, "e", `{"late":true}`), "a late event resolved a timed-out wait")
	equal(t, "status after a late event", f.step(r.ID, "w").Status, store.StepTimedOut)
	late := reach(t, f, c.Lease, f.waitStep(r.ID, 2, "w#1", "e", "", nil))
	check(t, late != nil, "the late event was not kept")
}

func testEventBeforeTimeout(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	timeout := f.now().Add(time.Hour)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 0, "w", "e", "", &timeout)) == nil, "resolved with nothing sent")
	equalTime(t, "available at the timeout", f.getRun(r.ID).AvailableAt, &timeout)
	at, found, err := f.s.NextWakeup(f.ctx)
	ok(t, err)
	check(t, found && at.Equal(timeout), "next wake-up: got %v %v, want the timeout %v", at, found, timeout)
	f.noClaim()

	check(t, signal(t, f, r.ID, "e", `{"v":1}`), "not delivered")
	c = f.claim(r.ID, longLease)
	equal(t, "resolved", c.Journal[0].Status, store.StepCompleted)
	// A timeout that fires after the event changes nothing and reports the row as it stands.
	got, err := f.s.TimeoutWait(f.ctx, c.Lease, "w", timeout, longLease)
	ok(t, err)
	equal(t, "status", got.Status, store.StepCompleted)
	equalJSON(t, "output", got.Output, `{"v":1}`)
	equalStep(t, f.step(r.ID, "w"), got)
}

func testParkWait(t *testing.T, f *fixture) {
	// Still waiting: ParkWait suspends the run until its new wake-up and releases the lease.
	r := f.run()
	c := f.claim(r.ID, longLease)
	due := f.now().Add(-time.Millisecond)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 0, "w", "e", "", &due)) == nil, "resolved with nothing sent")
	c = f.claim(r.ID, longLease)
	later := f.now().Add(time.Hour)
	parked, err := f.s.ParkWait(f.ctx, c.Lease, "w", &later, longLease)
	ok(t, err)
	check(t, parked == nil, "ParkWait of a waiting step returned %+v", parked)
	equalTime(t, "available at", f.getRun(r.ID).AvailableAt, &later)
	equal(t, "still waiting", f.step(r.ID, "w").Status, store.StepWaiting)
	f.noClaim()

	// Resolved after the claim loaded the journal: ParkWait returns the row and keeps the lease.
	r2 := f.run()
	c = f.claim(r2.ID, longLease)
	check(t, reach(t, f, c.Lease, f.waitStep(r2.ID, 0, "w", "e", "", &due)) == nil, "resolved with nothing sent")
	c = f.claim(r2.ID, longLease)
	equal(t, "journal at claim", c.Journal[0].Status, store.StepWaiting)
	check(t, signal(t, f, r2.ID, "e", `{"mid":"replay"}`), "not delivered")
	got, err := f.s.ParkWait(f.ctx, c.Lease, "w", &later, longLease)
	ok(t, err)
	check(t, got != nil, "ParkWait overwrote an event that arrived during the replay")
	equal(t, "status", got.Status, store.StepCompleted)
	equalJSON(t, "output", got.Output, `{"mid":"replay"}`)
	ok(t, f.s.CommitStep(f.ctx, c.Lease, store.Step{RunID: r2.ID, Seq: 1, Key: "next", Kind: store.KindRun,
		Status: store.StepCompleted, Attempt: 1, StartedAt: f.now(), CompletedAt: ptr(f.now())}, longLease))
	f.noClaim()

	// ParkWait with no time waits for an event only.
	r3 := f.run()
	c = f.claim(r3.ID, longLease)
	check(t, reach(t, f, c.Lease, f.waitStep(r3.ID, 0, "w", "e", "", &due)) == nil, "resolved with nothing sent")
	c = f.claim(r3.ID, longLease)
	parked, err = f.s.ParkWait(f.ctx, c.Lease, "w", nil, longLease)
	ok(t, err)
	check(t, parked == nil, "resolved")
	check(t, f.getRun(r3.ID).AvailableAt == nil, "a run parked until an event is available")
}

// testSignalRacesWait sends a signal while the run reaches its wait, many times at once: the
// signal is either delivered to the registered wait or kept and consumed by it, never lost.
func testSignalRacesWait(t *testing.T, f *fixture) {
	const n = 40
	runs := make([]store.Run, n)
	for i := range runs {
		runs[i] = f.run()
	}
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: n, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claims", len(claims), n)

	type outcome struct {
		resolved           *store.Step
		delivered          bool
		waitErr, signalErr error
	}
	out := make([]outcome, n)
	var wg sync.WaitGroup
	for i, c := range claims {
		wg.Go(func() {
			got, err := f.s.ReachWait(f.ctx, c.Lease, f.waitStep(c.Run.ID, 0, "w", "ping", "", nil), longLease)
			out[i].resolved, out[i].waitErr = got, err
		})
		wg.Go(func() {
			d, err := deliveredOf(f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: c.Run.ID, Event: "ping", Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), MaxBuffered: 10}))
			out[i].delivered, out[i].signalErr = d, err
		})
	}
	wg.Wait()
	for i, c := range claims {
		o := out[i]
		check(t, o.waitErr == nil && o.signalErr == nil, "run %d: wait: %v; signal: %v", i, o.waitErr, o.signalErr)
		check(t, (o.resolved != nil) != o.delivered, "run %d: resolved by ReachWait %v, delivered by Signal %v: want exactly one", i, o.resolved != nil, o.delivered)
		s := f.step(c.Run.ID, "w")
		equal(t, fmt.Sprint("run ", i, " wait"), s.Status, store.StepCompleted)
		equalJSON(t, fmt.Sprint("run ", i, " payload"), s.Output, fmt.Sprintf(`{"i":%d}`, i))
	}
}

// atOnce calls call(0) to call(n-1) on n goroutines at once and returns their results; a
// caller's error fails the test.
func atOnce[T any](t *testing.T, n int, call func(i int) (T, error)) []T {
	t.Helper()
	out := make([]T, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := call(i)
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
			}
			out[i] = res
		}()
	}
	wg.Wait()
	return out
}

// deliveredOf is whether a signal's event was delivered to a waiting step.
func deliveredOf(res store.SignalResult, err error) (bool, error) { return res.Delivered, err }

// sendWithID signals the run with a signal id.
func sendWithID(t *testing.T, f *fixture, runID, event, payload, id string) store.SignalResult {
	t.Helper()
	res, err := f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: runID, Event: event,
		Payload: json.RawMessage(payload), SignalID: id, MaxBuffered: 100})
	ok(t, err)
	return res
}

// A signal id is taken once per run: a repeat, of any event, is acknowledged as a duplicate
// with the first sending's outcome, changes nothing, and is acknowledged still after the run
// ended; the same id is new to another run.
func testSignalIDDeliversOnce(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 0, "first", "e", "", nil)) == nil, "resolved with nothing sent")
	equal(t, "first sending", sendWithID(t, f, r.ID, "e", `1`, "sig-1"), store.SignalResult{Delivered: true})
	equal(t, "repeat", sendWithID(t, f, r.ID, "e", `2`, "sig-1"), store.SignalResult{Delivered: true, Duplicate: true})
	equal(t, "repeat of another event", sendWithID(t, f, r.ID, "other", `3`, "sig-1"), store.SignalResult{Delivered: true, Duplicate: true})
	equalJSON(t, "the wait's output", f.step(r.ID, "first").Output, `1`)

	// The repeats kept nothing for the run: the next waits take the events sent after them.
	c = f.claim(r.ID, longLease)
	check(t, !signal(t, f, r.ID, "e", `9`), "delivered with nothing waiting")
	check(t, !signal(t, f, r.ID, "other", `8`), "delivered with nothing waiting")
	got := reach(t, f, c.Lease, f.waitStep(r.ID, 1, "second", "e", "", nil))
	check(t, got != nil, "the event sent after the repeats was lost")
	equalJSON(t, "the second wait's output", got.Output, `9`)
	got = reach(t, f, c.Lease, f.waitStep(r.ID, 2, "third", "other", "", nil))
	check(t, got != nil, "the event sent after the repeats was lost")
	equalJSON(t, "the third wait's output", got.Output, `8`)

	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	equal(t, "a repeat after the run ended", sendWithID(t, f, r.ID, "e", `1`, "sig-1"), store.SignalResult{Delivered: true, Duplicate: true})
	_, err := f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: r.ID, Event: "e", SignalID: "sig-2", MaxBuffered: 100})
	wantErr(t, err, store.ErrConflict)
	// Another tenant cannot learn of the id: the run is not found.
	_, err = f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant + "-other", RunID: r.ID, Event: "e", SignalID: "sig-1", MaxBuffered: 100})
	wantErr(t, err, store.ErrNotFound)

	other := f.run()
	equal(t, "the same id to another run", sendWithID(t, f, other.ID, "e", `1`, "sig-1"), store.SignalResult{})
}

// A signal kept for a run that waits for nothing yet is kept once, however often it is sent;
// a sending refused by the buffer bound does not take its id.
func testSignalIDKeptOnce(t *testing.T, f *fixture) {
	r := f.run()
	equal(t, "first sending", sendWithID(t, f, r.ID, "e", `1`, "k"), store.SignalResult{})
	equal(t, "repeat", sendWithID(t, f, r.ID, "e", `2`, "k"), store.SignalResult{Duplicate: true})
	c := f.claim(r.ID, longLease)
	got := reach(t, f, c.Lease, f.waitStep(r.ID, 0, "w", "e", "", nil))
	check(t, got != nil, "the kept signal was lost")
	equalJSON(t, "the wait's output", got.Output, `1`)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 1, "w#1", "e", "", nil)) == nil, "the repeat was kept too")

	full := f.run()
	_, err := f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: full.ID, Event: "e", Payload: json.RawMessage(`0`), MaxBuffered: 1})
	ok(t, err)
	_, err = f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: full.ID, Event: "e", Payload: json.RawMessage(`1`), SignalID: "late", MaxBuffered: 1})
	wantErr(t, err, store.ErrLimit)
	equal(t, "the refused id sent again", sendWithID(t, f, full.ID, "e", `1`, "late"), store.SignalResult{})
}

// Sent at once from many callers, a signal id is delivered by exactly one of them.
func testSignalIDRaces(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 0, "w", "e", "", nil)) == nil, "resolved with nothing sent")
	const callers = 8
	results := atOnce(t, callers, func(i int) (store.SignalResult, error) {
		return f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: r.ID, Event: "e",
			Payload: json.RawMessage(fmt.Sprint(i)), SignalID: "once", MaxBuffered: 100})
	})
	var first, dup int
	for _, res := range results {
		check(t, res.Delivered, "a caller was told the event was kept, not delivered: %+v", res)
		if res.Duplicate {
			dup++
		} else {
			first++
		}
	}
	equal(t, "callers told theirs was the first sending", first, 1)
	equal(t, "callers told theirs was a repeat", dup, callers-1)
	c = f.claim(r.ID, longLease)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 1, "w#1", "e", "", nil)) == nil, "a repeat was kept for the run")
}
