package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var cancelTests = []test{
	{"RequestCancelIsKeptAndWakes", testRequestCancel},
	{"RequestCancelOfAnEndedRun", testRequestCancelEnded},
	{"CancelWaitLosesToAnEvent", testCancelWait},
}

// RequestCancel records the first request's times, makes a suspended run claimable now and
// tells the hosts; a second request keeps the first one's times.
func testRequestCancel(t *testing.T, f *fixture) {
	notices := f.listener()
	r := f.run()
	c := f.claim(r.ID, longLease)
	later := f.now().Add(time.Hour)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, &later))
	f.noClaim()
	grace := f.now().Add(time.Minute)
	got, err := f.s.RequestCancel(f.ctx, f.tenant, r.ID, grace)
	ok(t, err)
	check(t, got.CancelRequestedAt != nil && got.CancelGraceUntil != nil && got.CancelGraceUntil.Equal(grace),
		"the answer: requested %v, grace %v, want grace %v", got.CancelRequestedAt, got.CancelGraceUntil, grace)
	equal(t, "status", got.Status, store.StatusRunning)
	f.expect(notices, store.NoticeCancelRequested, r.ID, "RequestCancel")
	again, err := f.s.RequestCancel(f.ctx, f.tenant, r.ID, grace.Add(time.Hour))
	ok(t, err)
	check(t, again.CancelRequestedAt.Equal(*got.CancelRequestedAt) && again.CancelGraceUntil.Equal(grace),
		"a second request changed the first one's times: %v %v", again.CancelRequestedAt, again.CancelGraceUntil)
	// The suspended run is claimable now, and its claim carries the cancel.
	c = f.claim(r.ID, longLease)
	check(t, c.Run.CancelGraceUntil != nil && c.Run.CancelGraceUntil.Equal(grace), "the claim's run: grace %v", c.Run.CancelGraceUntil)
	equal(t, "as read", f.getRun(r.ID).CancelGraceUntil.Equal(grace), true)
}

// A run that ended (or that another tenant asks about) cannot be asked to cancel.
func testRequestCancelEnded(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, []byte(`1`), nil, nil))
	_, err := f.s.RequestCancel(f.ctx, f.tenant, r.ID, f.now())
	check(t, errors.Is(err, store.ErrConflict), "an ended run: %v, want ErrConflict", err)
	_, err = f.s.RequestCancel(f.ctx, "someone-else", r.ID, f.now())
	check(t, errors.Is(err, store.ErrNotFound), "another tenant's run: %v, want ErrNotFound", err)
	_, err = f.s.RequestCancel(f.ctx, f.tenant, "00000000-0000-4000-8000-000000000000", f.now())
	check(t, errors.Is(err, store.ErrNotFound), "an unknown run: %v, want ErrNotFound", err)
}

// CancelWait ends a waiting step as cancelled, unless an event resolved it first: then the
// resolved row is returned unchanged.
func testCancelWait(t *testing.T, f *fixture) {
	info := abi.ErrorInfo{Code: abi.CodeCancelled, Message: "the run was cancelled", NonRetryable: true}
	r := f.run()
	c := f.claim(r.ID, longLease)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 0, "w", "paid", "", nil)) == nil, "resolved with nothing sent")
	// A run waiting without a timeout is claimable only by an event, or by a cancel request.
	_, err := f.s.RequestCancel(f.ctx, f.tenant, r.ID, f.now().Add(time.Minute))
	ok(t, err)
	c = f.claim(r.ID, longLease)
	got, err := f.s.CancelWait(f.ctx, c.Lease, "w", f.now(), info, longLease)
	ok(t, err)
	equal(t, "status", got.Status, store.StepCancelled)
	check(t, got.Error != nil && got.Error.Code == abi.CodeCancelled, "error %+v", got.Error)

	r2 := f.run()
	c2 := f.claim(r2.ID, longLease)
	check(t, reach(t, f, c2.Lease, f.waitStep(r2.ID, 0, "w", "ping", "", nil)) == nil, "resolved with nothing sent")
	check(t, f.sendSignal(r2.ID), "the signal did not resolve the wait")
	c2 = f.claim(r2.ID, longLease)
	got, err = f.s.CancelWait(f.ctx, c2.Lease, "w", f.now(), info, longLease)
	ok(t, err)
	equal(t, "status of a wait an event resolved first", got.Status, store.StepCompleted)
	stale := c2.Lease
	stale.Epoch--
	_, err = f.s.CancelWait(f.ctx, stale, "w", f.now(), info, longLease)
	check(t, errors.Is(err, store.ErrLeaseLost), "a stale lease: %v, want ErrLeaseLost", err)
}
