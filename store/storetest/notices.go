package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

var noticeTests = []test{
	{"WakeNotices", testWakeNotices},
	{"CancelNotice", testCancelNotice},
}

// noticeWait bounds how long a test waits for a notice that must come. It is a failure
// deadline, not a timing assertion: notices normally arrive in milliseconds.
const noticeWait = 10 * time.Second

// listener runs Listen until the test ends and returns its notices once it is listening.
func (f *fixture) listener() <-chan store.Notice {
	f.t.Helper()
	ctx, cancel := context.WithCancel(f.ctx)
	notices := make(chan store.Notice, 64)
	done := make(chan error, 1)
	go func() { done <- f.s.Listen(ctx, notices) }()
	f.t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(noticeWait):
			f.t.Errorf("Listen did not return after its context ended")
		}
	})
	// Listen announces that it listens with a wake notice.
	select {
	case n := <-notices:
		equal(f.t, "first notice", n.Kind, store.NoticeWake)
		// Nobody's write caused it: the caller must look for work whatever it did itself.
		equal(f.t, "first notice is Self", n.Self, false)
	case err := <-done:
		f.t.Fatalf("Listen returned before listening: %v", err)
	case <-time.After(noticeWait):
		f.t.Fatalf("Listen sent no notice once listening")
	}
	return notices
}

// expect waits for a notice of kind (and run id, for cancels), skipping others.
func (f *fixture) expect(notices <-chan store.Notice, kind store.NoticeKind, runID, after string) {
	f.t.Helper()
	deadline := time.After(noticeWait)
	for {
		select {
		case n := <-notices:
			if n.Kind == kind && n.RunID == runID {
				// Every write in these tests goes through the listening store itself.
				check(f.t, n.Kind != store.NoticeWake || n.Self, "a wake notice after %s is not marked Self", after)
				return
			}
		case <-deadline:
			f.t.Fatalf("no notice %v %q after %s", kind, runID, after)
		}
	}
}

func testWakeNotices(t *testing.T, f *fixture) {
	notices := f.listener()

	r := f.run()
	f.expect(notices, store.NoticeWake, "", "CreateRun")

	c := f.claim(r.ID, longLease)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 0, "w", "e", "", nil)) == nil, "resolved with nothing sent")
	check(t, signal(t, f, r.ID, "e", `{}`), "not delivered")
	f.expect(notices, store.NoticeWake, "", "a delivered signal")

	c = f.claim(r.ID, longLease)
	check(t, reach(t, f, c.Lease, f.waitStep(r.ID, 1, "w2", "b", "", nil)) == nil, "resolved with nothing sent")
	n, err := f.broadcast(f.tenant, "b", json.RawMessage(`{}`))
	ok(t, err)
	equal(t, "resolved", n, 1)
	f.expect(notices, store.NoticeWake, "", "a resolving broadcast")

	f.putModule(f.tenant, []byte("hotfix"), true, wf(wfName, "v1"))
	f.expect(notices, store.NoticeWake, "", "a hotfix deploy")
}

func testCancelNotice(t *testing.T, f *fixture) {
	notices := f.listener()
	r := f.run()
	_, err := f.s.CancelRun(f.ctx, f.tenant, r.ID)
	ok(t, err)
	f.expect(notices, store.NoticeCancel, r.ID, "CancelRun")
}
