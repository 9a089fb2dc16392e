package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var childTests = []test{
	{"AwaitedChildCompletes", testChildCompletes},
	{"FailedChildFailsTheStep", testChildFails},
	{"CancelledChildFailsTheStep", testChildCancelled},
	{"ChainEndsTheWait", testChildChain},
	{"RetryAfterAContinueStillEndsTheWait", testChildChainRetried},
	{"DetachedAndRefused", testChildDetachedAndRefused},
	{"Fenced", testChildFenced},
	{"AnsweredStepIsLeftAlone", testChildAfterCancelledStep},
	{"OrphanedByTheParentsEnd", testOrphanedChildren},
}

// childStep is a freshly reached child step at seq, as the engine hands it to StartChild.
func (f *fixture) childStep(parentID string, seq int, key string) store.Step {
	return store.Step{RunID: parentID, Seq: seq, Key: key, Kind: store.KindChild, StartedAt: f.now()}
}

// childRun is a child of workflow wfName with the id key, as the engine resolves it.
func (f *fixture) childRun(key string) store.NewRun {
	return store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
		Input: json.RawMessage(`{"child":true}`), IdempotencyKey: key, RetentionDays: 7}
}

// startAwaited claims a new parent, starts an awaited child at its step "kid" (after a held
// step "first") and returns the parent and the child.
func (f *fixture) startAwaited() (parent, child store.Run) {
	f.t.Helper()
	parent = f.run()
	c := f.claim(parent.ID, longLease)
	held := f.runStep(parent.ID, 0, "first")
	row, childID, err := f.s.StartChild(f.ctx, c.Lease, &held, f.childStep(parent.ID, 1, "kid"), f.childRun(parent.ID+":kid"),
		store.ChildLink{ParentRunID: parent.ID, ParentKey: "kid", ParentClose: abi.ParentCloseCancel, Awaited: true}, longLease)
	ok(f.t, err)
	equal(f.t, "the awaited step's status", row.Status, store.StepWaiting)
	kids, err := f.s.ChildrenOf(f.ctx, f.tenant, parent.ID)
	ok(f.t, err)
	if len(kids) != 1 || kids[0].RunID != childID {
		f.t.Fatalf("children %+v, want the one started, %s", kids, childID)
	}
	return parent, f.getRun(kids[0].RunID)
}

// An awaited child is created pending with its id and link, the parent's held step and its
// waiting step journaled and the parent released; the child's end completes the step with its
// output and makes the parent claimable.
func testChildCompletes(t *testing.T, f *fixture) {
	parent, child := f.startAwaited()
	equal(t, "the child's status", child.Status, store.StatusPending)
	equal(t, "the child's id", child.IdempotencyKey, parent.ID+":kid")
	equalJSON(t, "the child's input", child.Input, `{"child":true}`)
	link, found, err := f.s.ParentOf(f.ctx, f.tenant, child.ID)
	ok(t, err)
	check(t, found && link == (store.ChildLink{ParentRunID: parent.ID, ParentKey: "kid", ParentClose: abi.ParentCloseCancel, Awaited: true}),
		"the child's link: %+v %v", link, found)
	_, found, err = f.s.ParentOf(f.ctx, "other-tenant", child.ID)
	ok(t, err)
	check(t, !found, "another tenant reads the child's parent")
	equal(t, "the parent's journal", len(f.steps(parent.ID)), 2)
	equal(t, "the held step", f.step(parent.ID, "first").Status, store.StepCompleted)

	cc := f.claim(child.ID, longLease) // the parent waits: only the child is runnable
	ok(t, f.s.Finish(f.ctx, cc.Lease, store.StatusCompleted, json.RawMessage(`{"square":49}`), nil, nil))
	kid := f.step(parent.ID, "kid")
	equal(t, "the step's status", kid.Status, store.StepCompleted)
	equalJSON(t, "the step's output", kid.Output, `{"square":49}`)
	check(t, kid.CompletedAt != nil, "the resolved step has no completion time")
	f.claim(parent.ID, longLease)
}

// A failed child fails the parent's step with child_failed, non-retryable, with its id, status
// and error in details: store.ChildFailure's value, in both stores.
func testChildFails(t *testing.T, f *fixture) {
	parent, child := f.startAwaited()
	cc := f.claim(child.ID, longLease)
	info := &abi.ErrorInfo{Code: "child_boom", Message: "the child failed on 3"}
	ok(t, f.s.CommitAndFinish(f.ctx, cc.Lease, f.runStep(child.ID, 0, "square"), store.StatusFailed, nil, info, nil))
	kid := f.step(parent.ID, "kid")
	equal(t, "the step's status", kid.Status, store.StepFailed)
	want := store.ChildFailure(child.ID, wfName, store.StatusFailed, info)
	check(t, kid.Error != nil && kid.Error.Code == want.Code && kid.Error.Message == want.Message && kid.Error.NonRetryable,
		"the step's error %+v, want %+v", kid.Error, want)
	equalJSON(t, "the error's details", kid.Error.Details, string(want.Details))
	f.claim(parent.ID, longLease)
}

// A child cancelled (terminated) by a client fails the parent's step too.
func testChildCancelled(t *testing.T, f *fixture) {
	parent, child := f.startAwaited()
	_, err := f.s.CancelRun(f.ctx, f.tenant, child.ID)
	ok(t, err)
	kid := f.step(parent.ID, "kid")
	equal(t, "the step's status", kid.Status, store.StepFailed)
	check(t, kid.Error != nil && kid.Error.Code == abi.CodeChildFailed, "the step's error %+v", kid.Error)
	want := store.ChildFailure(child.ID, wfName, store.StatusCancelled, f.getRun(child.ID).Error)
	equal(t, "the step's message", kid.Error.Message, want.Message)
	f.claim(parent.ID, longLease)
}

// A child that continues as new (or is retried) does not end its parent's wait: its successor
// is the parent's child in its place, and the last run of the chain ends the wait.
func testChildChain(t *testing.T, f *fixture) {
	parent, child := f.startAwaited()
	cc := f.claim(child.ID, longLease)
	next, err := f.s.FinishAndContinue(f.ctx, cc.Lease, nil, store.StatusContinued, nil, nil, f.next(cc.Run, `{"turn":1}`, 1), nil)
	ok(t, err)
	equal(t, "the step after a continue-as-new", f.step(parent.ID, "kid").Status, store.StepWaiting)
	link, found, err := f.s.ParentOf(f.ctx, f.tenant, next.ID)
	ok(t, err)
	check(t, found && link.ParentRunID == parent.ID && link.ParentKey == "kid" && link.Awaited, "the successor's link: %+v %v", link, found)
	nc := f.claim(next.ID, longLease)
	ok(t, f.s.Finish(f.ctx, nc.Lease, store.StatusCompleted, json.RawMessage(`7`), nil, nil))
	kid := f.step(parent.ID, "kid")
	equal(t, "the step after the chain ended", kid.Status, store.StepCompleted)
	equalJSON(t, "the step's output", kid.Output, `7`)
	kids, err := f.s.ChildrenOf(f.ctx, f.tenant, parent.ID)
	ok(t, err)
	equal(t, "the parent's children, the chain's runs", len(kids), 2)
}

// The mark that a run is a child, which a run's end reads instead of looking for a parent, is
// handed on down a chain: a child continued as new, whose successor fails and is retried, and
// whose retry fails for good, fails its parent's step (that end reads the mark handed on twice).
func testChildChainRetried(t *testing.T, f *fixture) {
	parent, child := f.startAwaited()
	cc := f.claim(child.ID, longLease)
	next, err := f.s.FinishAndContinue(f.ctx, cc.Lease, nil, store.StatusContinued, nil, nil, f.next(cc.Run, `{"turn":1}`, 1), nil)
	ok(t, err)
	nc := f.claim(next.ID, longLease)
	retry, err := f.s.FinishAndContinue(f.ctx, nc.Lease, nil, store.StatusFailed, nil, &abi.ErrorInfo{Code: "flaky", Message: "once"}, f.next(nc.Run, `{"turn":1}`, 2), nil)

	ok(t, err)
	equal(t, "the retry's attempt", retry.Attempt, 2)
	equal(t, "the step while the chain goes on", f.step(parent.ID, "kid").Status, store.StepWaiting)
	link, found, err := f.s.ParentOf(f.ctx, f.tenant, retry.ID)
	ok(t, err)
	check(t, found && link.ParentRunID == parent.ID && link.Awaited, "the retry's link: %+v %v", link, found)
	rc := f.claim(retry.ID, longLease)
	ok(t, f.s.CommitAndFinish(f.ctx, rc.Lease, f.runStep(retry.ID, 0, "again"), store.StatusFailed, nil, &abi.ErrorInfo{Code: "flaky", Message: "twice", NonRetryable: true}, nil))
	kid := f.step(parent.ID, "kid")
	equal(t, "the step after the retry failed", kid.Status, store.StepFailed)
	check(t, kid.Error != nil && kid.Error.Code == abi.CodeChildFailed, "the step's error %+v", kid.Error)
	f.claim(parent.ID, longLease)
}

// A detached child's step completes at once with its run id, the parent keeping its lease; a
// second step whose child id is taken fails with child_refused and creates nothing; another
// tenant may use the same id.
func testChildDetachedAndRefused(t *testing.T, f *fixture) {
	parent := f.run()
	c := f.claim(parent.ID, longLease)
	detached := store.ChildLink{ParentRunID: parent.ID, ParentKey: "audit", ParentClose: abi.ParentCloseAbandon}
	row, childID, err := f.s.StartChild(f.ctx, c.Lease, nil, f.childStep(parent.ID, 0, "audit"), f.childRun("audit-1"), detached, longLease)
	ok(t, err)
	equal(t, "the detached step's status", row.Status, store.StepCompleted)
	var started abi.ChildStarted
	ok(t, json.Unmarshal(f.step(parent.ID, "audit").Output, &started))
	equal(t, "the child's id as returned", childID, started.RunID)
	child := f.getRun(started.RunID)
	equal(t, "the child's id", child.IdempotencyKey, "audit-1")

	again := store.ChildLink{ParentRunID: parent.ID, ParentKey: "audit#1", ParentClose: abi.ParentCloseCancel, Awaited: true}
	row, childID, err = f.s.StartChild(f.ctx, c.Lease, nil, f.childStep(parent.ID, 1, "audit#1"), f.childRun("audit-1"), again, longLease)
	ok(t, err)
	equal(t, "the refused step's status", row.Status, store.StepFailed)
	equal(t, "the refused step's child", childID, "")
	step := f.step(parent.ID, "audit#1")
	check(t, step.Error != nil && step.Error.Code == abi.CodeChildRefused && step.Error.NonRetryable, "the refused step's error %+v", step.Error)
	kids, err := f.s.ChildrenOf(f.ctx, f.tenant, parent.ID)
	ok(t, err)
	equal(t, "children after the refusal", len(kids), 1)
	// The parent still holds its lease: a commit under it goes through.
	ok(t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(parent.ID, 2, "after"), longLease))

	// The detached child's end resolves nothing.
	cc := f.claim(child.ID, longLease)
	ok(t, f.s.Finish(f.ctx, cc.Lease, store.StatusFailed, nil, &abi.ErrorInfo{Code: "x", Message: "y"}, nil))
	equal(t, "the detached step after the child failed", f.step(parent.ID, "audit").Status, store.StepCompleted)
}

// StartChild is fenced: under a lost lease no child is created and nothing is journaled.
func testChildFenced(t *testing.T, f *fixture) {
	parent := f.run()
	c := f.claim(parent.ID, longLease)
	stale := c.Lease
	stale.Epoch--
	_, _, err := f.s.StartChild(f.ctx, stale, nil, f.childStep(parent.ID, 0, "kid"), f.childRun("fenced-1"),
		store.ChildLink{ParentRunID: parent.ID, ParentKey: "kid", ParentClose: abi.ParentCloseCancel, Awaited: true}, longLease)
	check(t, errors.Is(err, store.ErrLeaseLost), "a stale lease: %v, want ErrLeaseLost", err)
	equal(t, "the parent's journal", len(f.steps(parent.ID)), 0)
	runs, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{})
	ok(t, err)
	equal(t, "runs", len(runs), 1)
	_, _, err = f.s.StartChild(f.ctx, c.Lease, nil, f.childStep(parent.ID, 0, "kid"), store.NewRun{TenantID: f.tenant, Workflow: wfName},
		store.ChildLink{ParentRunID: parent.ID, ParentKey: "kid"}, longLease)
	check(t, err != nil, "a child without an id was started")
}

// A step that answered otherwise first (the parent's cancellation reached it) is not changed by
// the child's end, and the parent is not woken by it.
func testChildAfterCancelledStep(t *testing.T, f *fixture) {
	parent, child := f.startAwaited()
	cc := f.claim(child.ID, longLease)
	_, err := f.s.RequestCancel(f.ctx, f.tenant, parent.ID, f.now().Add(longLease))
	ok(t, err)
	pc := f.claim(parent.ID, longLease) // the cancel request wakes the parent
	info := abi.ErrorInfo{Code: abi.CodeCancelled, Message: "the run was cancelled", NonRetryable: true}
	row, err := f.s.CancelWait(f.ctx, pc.Lease, "kid", f.now(), info, longLease)
	ok(t, err)
	equal(t, "the cancelled step", row.Status, store.StepCancelled)
	ok(t, f.s.Suspend(f.ctx, pc.Lease, nil, nil))
	ok(t, f.s.Finish(f.ctx, cc.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	equal(t, "the cancelled step after the child ended", f.step(parent.ID, "kid").Status, store.StepCancelled)
	f.noClaim()
}

// A parent's end leaves its live children whose parentClose is cancel to OrphanedChildren, the
// sweep's list, until a cancel is asked of them; a child with abandon, a child that ended and
// every child of a live parent are never listed. The list spans tenants and runs other tests
// make: only this test's runs are looked at.
func testOrphanedChildren(t *testing.T, f *fixture) {
	parent := f.run()
	c := f.claim(parent.ID, longLease)
	start := func(seq int, key, close string) string {
		t.Helper()
		link := store.ChildLink{ParentRunID: parent.ID, ParentKey: key, ParentClose: close}
		_, id, err := f.s.StartChild(f.ctx, c.Lease, nil, f.childStep(parent.ID, seq, key), f.childRun(parent.ID+":"+key), link, longLease)
		ok(t, err)
		return id
	}
	closed, abandoned, ended := start(0, "kid", abi.ParentCloseCancel), start(1, "free", abi.ParentCloseAbandon), start(2, "done", abi.ParentCloseCancel)
	_, err := f.s.CancelRun(f.ctx, f.tenant, ended)
	ok(t, err)
	orphans := func() map[string]bool {
		t.Helper()
		refs, err := f.s.OrphanedChildren(f.ctx, 100000)
		ok(t, err)
		out := make(map[string]bool)
		for _, r := range refs {
			if r.TenantID == f.tenant {
				equal(t, "an orphan's parent", r.ParentRunID, parent.ID)
				out[r.RunID] = true
			}
		}
		return out
	}
	check(t, len(orphans()) == 0, "orphans of a live parent: %v", orphans())

	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`{}`), nil, nil))
	got := orphans()
	check(t, got[closed] && !got[abandoned] && !got[ended] && len(got) == 1,
		"orphans %v after the parent ended: want only the cancel child %s (abandon %s, ended %s)", got, closed, abandoned, ended)

	_, err = f.s.RequestCancel(f.ctx, f.tenant, closed, f.now().Add(time.Minute))
	ok(t, err)
	check(t, len(orphans()) == 0, "orphans %v after the cancel was asked", orphans())
}
