package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var parallelTests = []test{
	{"ForkCopiesTheJournal", testForkCopiesTheJournal},
	{"AllJoinCompletes", testJoinAllCompletes},
	{"AllJoinFailsAtTheFirstFailure", testJoinAllFails},
	{"FirstJoin", testJoinFirst},
	{"FirstJoinAllFail", testJoinFirstAllFail},
	{"AllSettledJoin", testJoinAllSettled},
	{"ForkFenced", testForkFenced},
}

// fork claims a new parent, commits a held step "first" and forks n branches at its step
// "fan" (seq 1) joined by join, at most max at once. It returns the parent and the branches'
// run ids in branch order.
func (f *fixture) fork(n int, join string, max int) (store.Run, []string) {
	f.t.Helper()
	parent := f.run()
	c := f.claim(parent.ID, longLease)
	held := f.runStep(parent.ID, 0, "first")
	fk := store.Fork{Join: join, MaxConcurrent: max}
	for i := range n {
		fk.Branches = append(fk.Branches, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
			Input: parent.Input, IdempotencyKey: fmt.Sprintf("%s:fan[%d]", parent.ID, i), RetentionDays: 7})
	}
	row, ids, err := f.s.ForkBranches(f.ctx, c.Lease, &held, store.Step{RunID: parent.ID, Seq: 1, Key: "fan", Kind: store.KindParallel,
		Match: forkRequest(n, join, max), StartedAt: f.now()}, fk, longLease)
	ok(f.t, err)
	equal(f.t, "the parallel step's status", row.Status, store.StepWaiting)
	equal(f.t, "the branches", len(ids), n)
	return parent, ids
}

// forkRequest is the request the engine keeps in a parallel step's Match (ABI.md §4.18), which
// the store must keep as it is, through the join's decision, for a replay to compare.
func forkRequest(n int, join string, max int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"branches":%d,"join":%q,"maxConcurrent":%d}`, n, join, max))
}

// claimSet claims the runnable runs, which must be exactly ids, by id.
func (f *fixture) claimSet(ids ...string) map[string]store.Claim {
	f.t.Helper()
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 100, LeaseFor: longLease})
	ok(f.t, err)
	got, want := claimIDs(claims), append([]string(nil), ids...)
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		f.t.Fatalf("claim: got runs %v, want %v", got, want)
	}
	out := map[string]store.Claim{}
	for _, c := range claims {
		out[c.Run.ID] = c
	}
	return out
}

// result reads the parallel step's ParallelResult.
func (f *fixture) parallelResult(parentID string) abi.ParallelResult {
	f.t.Helper()
	s := f.step(parentID, "fan")
	equal(f.t, "the parallel step's status", s.Status, store.StepCompleted)
	var r abi.ParallelResult
	ok(f.t, json.Unmarshal(s.Output, &r))
	var req abi.Parallel
	ok(f.t, json.Unmarshal(s.Match, &req))
	equal(f.t, "the decided step's request: its branches", req.Branches, len(r.Branches))
	return r
}

func statuses(r abi.ParallelResult) []string {
	var out []string
	for _, b := range r.Branches {
		out = append(out, b.Status)
	}
	return out
}

var boom = &abi.ErrorInfo{Code: "branch_boom", Message: "branch 1 fails", NonRetryable: true}

// The fork creates its branches pending, as children of the parent (parent key fan[i], cancel,
// awaited), with the parent's workflow, module and input, and a journal that is the parent's
// entries before the step (the held one included) and the branch's entry at it; the parent
// is suspended; only maxConcurrent branches are claimable.
func testForkCopiesTheJournal(t *testing.T, f *fixture) {
	parent, ids := f.fork(3, abi.JoinAll, 2)
	kids, err := f.s.ChildrenOf(f.ctx, f.tenant, parent.ID)
	ok(t, err)
	equal(t, "the parent's children", len(kids), 3)
	for i, id := range ids {
		link, found, err := f.s.ParentOf(f.ctx, f.tenant, id)
		ok(t, err)
		check(t, found && link == (store.ChildLink{ParentRunID: parent.ID, ParentKey: store.BranchKey("fan", i), ParentClose: abi.ParentCloseCancel, Awaited: true}),
			"branch %d's link: %+v %v", i, link, found)
		r := f.getRun(id)
		equal(t, "a branch's status", r.Status, store.StatusPending)
		equal(t, "a branch's digest", r.Digest, parent.Digest)
		equalJSON(t, "a branch's input", r.Input, string(parent.Input))
		steps := f.steps(id)
		equal(t, "a branch's journal", len(steps), 2)
		equal(t, "the copied step", steps[0].Key+"/"+string(steps[0].Kind)+"/"+string(steps[0].Status), "first/run/completed")
		equal(t, "the branch's entry", steps[1].Key+"/"+string(steps[1].Kind)+"/"+string(steps[1].Status), "fan/branch/completed")
		equal(t, "the branch's entry's seq", steps[1].Seq, 1)
		equalJSON(t, "the branch's entry's output", steps[1].Output, fmt.Sprintf(`{"branch":%d}`, i))
	}
	equal(t, "the parent's journal", len(f.steps(parent.ID)), 2)
	equal(t, "the parent's step", f.step(parent.ID, "fan").Kind, store.KindParallel)
	equalJSON(t, "the parent's step's request", f.step(parent.ID, "fan").Match, string(forkRequest(3, abi.JoinAll, 2)))
	claims := f.claimSet(ids[0], ids[1]) // branch 2 is held; the parent waits
	equal(t, "a claimed branch's journal", len(claims[ids[0]].Journal), 2)
	// A branch's end frees its slot for the held one, in the same transaction.
	ok(t, f.s.Finish(f.ctx, claims[ids[0]].Lease, store.StatusCompleted, json.RawMessage(`{"sq":0}`), nil, nil))
	f.claimSet(ids[2])
	equal(t, "the step, undecided", f.step(parent.ID, "fan").Status, store.StepWaiting)
}

// all: the step completes when every branch completed, with their outputs in branch order
// and the first to complete; the parent is woken.
func testJoinAllCompletes(t *testing.T, f *fixture) {
	parent, ids := f.fork(3, abi.JoinAll, 3)
	claims := f.claimSet(ids...)
	for _, i := range []int{2, 0, 1} {
		ok(t, f.s.Finish(f.ctx, claims[ids[i]].Lease, store.StatusCompleted, json.RawMessage(fmt.Sprintf(`{"sq":%d}`, i*i)), nil, nil))
	}
	r := f.parallelResult(parent.ID)
	equal(t, "first", r.First, 2)
	equal(t, "statuses", fmt.Sprint(statuses(r)), "[completed completed completed]")
	for i, b := range r.Branches {
		equalJSON(t, "a branch's output", b.Output, fmt.Sprintf(`{"sq":%d}`, i*i))
	}
	f.claim(parent.ID, longLease)
}

// all: the first branch to fail fails the step with branch_failed (store.BranchFailure's
// value); the held branch is not released and later ends change nothing.
func testJoinAllFails(t *testing.T, f *fixture) {
	parent, ids := f.fork(3, abi.JoinAll, 2)
	claims := f.claimSet(ids[0], ids[1])
	ok(t, f.s.CommitAndFinish(f.ctx, claims[ids[1]].Lease, f.runStep(ids[1], 2, "square"), store.StatusFailed, nil, boom, nil))
	s := f.step(parent.ID, "fan")
	equal(t, "the step's status", s.Status, store.StepFailed)
	want := store.BranchFailure(1, ids[1], store.StatusFailed, boom)
	check(t, s.Error != nil && s.Error.Code == abi.CodeBranchFailed && s.Error.Message == want.Message && s.Error.NonRetryable,
		"the step's error %+v, want %+v", s.Error, want)
	equalJSON(t, "the error's details", s.Error.Details, string(want.Details))
	f.claimSet(parent.ID) // woken; branch 2 stays held
	ok(t, f.s.Finish(f.ctx, claims[ids[0]].Lease, store.StatusCompleted, json.RawMessage(`{"sq":0}`), nil, nil))
	equal(t, "the step after a late end", f.step(parent.ID, "fan").Error.Message, want.Message)
}

// first: failures wait for a completion; the first branch to complete completes the step,
// the ones still running (or held) cancelled in the result.
func testJoinFirst(t *testing.T, f *fixture) {
	parent, ids := f.fork(3, abi.JoinFirst, 2)
	claims := f.claimSet(ids[0], ids[1])
	ok(t, f.s.Finish(f.ctx, claims[ids[0]].Lease, store.StatusFailed, nil, boom, nil))
	equal(t, "the step after a failure", f.step(parent.ID, "fan").Status, store.StepWaiting)
	f.claimSet(ids[2]) // released into branch 0's slot
	ok(t, f.s.Finish(f.ctx, claims[ids[1]].Lease, store.StatusCompleted, json.RawMessage(`{"sq":1}`), nil, nil))
	r := f.parallelResult(parent.ID)
	equal(t, "first", r.First, 1)
	equal(t, "statuses", fmt.Sprint(statuses(r)), "[failed completed cancelled]")
	check(t, r.Branches[0].Error != nil && r.Branches[0].Error.Code == "branch_boom", "the failed branch's error: %+v", r.Branches[0].Error)
	equalJSON(t, "the completed branch's output", r.Branches[1].Output, `{"sq":1}`)
}

// first: when every branch failed, the step fails with the last one's end.
func testJoinFirstAllFail(t *testing.T, f *fixture) {
	parent, ids := f.fork(2, abi.JoinFirst, 2)
	claims := f.claimSet(ids...)
	ok(t, f.s.Finish(f.ctx, claims[ids[0]].Lease, store.StatusFailed, nil, boom, nil))
	_, err := f.s.CancelRun(f.ctx, f.tenant, ids[1])
	ok(t, err)
	s := f.step(parent.ID, "fan")
	equal(t, "the step's status", s.Status, store.StepFailed)
	var d abi.BranchFailure
	ok(t, json.Unmarshal(s.Error.Details, &d))
	equal(t, "the deciding branch", d.Branch, 1)
	equal(t, "its status", d.Status, string(store.StatusCancelled))
	equal(t, "its run", d.RunID, ids[1])
}

// allSettled: the step completes when every branch ended, whatever their ends.
func testJoinAllSettled(t *testing.T, f *fixture) {
	parent, ids := f.fork(3, abi.JoinAllSettled, 1)
	for i, id := range ids {
		c := f.claimSet(id)[id] // one at a time: each end releases the next
		if i == 1 {
			ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusFailed, nil, boom, nil))
			continue
		}
		ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(fmt.Sprintf(`{"sq":%d}`, i*i)), nil, nil))
	}
	r := f.parallelResult(parent.ID)
	equal(t, "first", r.First, 0)
	equal(t, "statuses", fmt.Sprint(statuses(r)), "[completed failed completed]")
	check(t, r.Branches[1].Error != nil && r.Branches[1].Error.Code == boom.Code && r.Branches[1].Error.Message == boom.Message, "the failed branch's error: %+v", r.Branches[1].Error)
	f.claim(parent.ID, longLease)
}

// A fork under a lost lease creates no branch and journals nothing.
func testForkFenced(t *testing.T, f *fixture) {
	parent := f.run()
	c := f.claim(parent.ID, longLease)
	stale := c.Lease
	stale.Epoch--
	fk := store.Fork{Join: abi.JoinAll, MaxConcurrent: 1, Branches: []store.NewRun{{TenantID: f.tenant, Workflow: wfName, Version: "v1",
		Digest: f.digest, IdempotencyKey: parent.ID + ":fan[0]", RetentionDays: 7}}}
	_, _, err := f.s.ForkBranches(f.ctx, stale, nil, store.Step{RunID: parent.ID, Seq: 0, Key: "fan", Kind: store.KindParallel, StartedAt: f.now()}, fk, longLease)
	check(t, errors.Is(err, store.ErrLeaseLost), "a stale lease: %v, want ErrLeaseLost", err)
	equal(t, "the parent's journal", len(f.steps(parent.ID)), 0)
	runs, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{})
	ok(t, err)
	equal(t, "runs", len(runs), 1)
}
