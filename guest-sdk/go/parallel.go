package wf

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Parallel branches (abi/ABI.md §4.18): a workflow fans out n branches that run at once, each
// a run of its own forked from this one, and joins them. A branch is the same workflow code:
// the host replays this run's journal in the branch's run up to the Parallel call, which there
// runs the branch's function instead of waiting, and ends the branch with its result. So the
// code before Parallel must be deterministic as any workflow code is, and a branch's function
// sees the variables as the parent had them at the call.

// statusBranch is parallel_run's reply in a branch's own pass: run the branch.
const statusBranch = 7

// Join is when a Parallel call returns.
type Join string

// Joins.
const (
	// JoinAll returns when every branch completed, and fails (CodeBranchFailed) at the first
	// that did not, cancelling the others. The default.
	JoinAll Join = "all"
	// JoinFirst returns at the first branch that completed, cancelling the others, and fails
	// when every branch failed.
	JoinFirst Join = "first"
	// JoinAllSettled returns when every branch ended, however.
	JoinAllSettled Join = "allSettled"
)

// CodeBranchFailed is the code of the error a Parallel call's join fails with.
const CodeBranchFailed = "branch_failed"

// ParallelOptions adjusts a Parallel call.
type ParallelOptions struct {
	// Join is when the call returns; "" is JoinAll.
	Join Join
	// MaxConcurrent bounds how many of the branches run at once (the others start as earlier
	// ones end, in branch order); 0 leaves it to the host (16).
	MaxConcurrent int
}

// BranchResult is one branch's end in a ParallelResult.
type BranchResult struct {
	// Status is "completed", "failed" (failed, or cancelled by anything but the join) or
	// "cancelled" (cancelled by the join, or never started).
	Status string `json:"status"`
	// Output is a completed branch's output JSON.
	Output json.RawMessage `json:"output,omitempty"`
	// Error is a failed branch's error.
	Error *Error `json:"error,omitempty"`
}

// ParallelResult is what a Parallel call returns: one entry per branch, in branch order, and
// the index of the first branch to complete (-1 when none did).
type ParallelResult struct {
	Branches []BranchResult `json:"branches"`
	First    int            `json:"first"`
}

// BranchError is the error of a Parallel call whose join failed (code CodeBranchFailed): the
// branch whose end decided it, its run, how that ended and its error. It unwraps to the
// *StepError of the call, so a workflow that returns it fails with the host's error.
type BranchError struct {
	Branch int    `json:"branch"`
	RunID  string `json:"runId"`
	Status string `json:"status"`
	Cause  *Error `json:"error"`
	step   *StepError
}

func (e *BranchError) Error() string { return e.step.Error() }

// Unwrap is the call's *StepError.
func (e *BranchError) Unwrap() error { return e.step }

// Parallel runs fn for each of n branches (1 to 64), concurrently, each as a run of its own,
// as the durable step name, and waits for their join (opts.Join), holding no instance: it
// returns the ParallelResult, or a *BranchError when the join failed, or a *StepError with
// code cancelled when this run was cancelled while it waited (the branches are cancelled
// too). fn gets the branch's index and returns the branch's output (any JSON value) or its
// error; it may make any durable call (steps, sleeps, children, even another Parallel under
// another name). Parallel must not be called inside a step callback.
func Parallel(ctx *Context, name string, n int, opts ParallelOptions, fn func(ctx *Context, i int) (any, error)) (ParallelResult, error) {
	req, _ := json.Marshal(struct {
		Branches      int  `json:"branches"`
		Join          Join `json:"join,omitempty"`
		MaxConcurrent int  `json:"maxConcurrent,omitempty"`
	}{n, opts.Join, opts.MaxConcurrent})
	status, data := callParallelRun([]byte(name), req)
	switch status {
	case statusQuery:
		ctx.answerQuery(data)
	case statusBranch:
		var b struct {
			Branch int `json:"branch"`
		}
		_ = json.Unmarshal(data, &b)
		runBranch(ctx, b.Branch, fn)
	case statusOK:
		var r ParallelResult
		if err := json.Unmarshal(data, &r); err != nil {
			return ParallelResult{}, &StepError{Step: name, Code: "decode", Message: "decode the parallel result: " + err.Error()}
		}
		return r, nil
	case statusStepFailed:
		se := stepError(name, data)
		if se.Code != CodeBranchFailed {
			return ParallelResult{}, se
		}
		be := &BranchError{step: se}
		_ = json.Unmarshal(se.Details, be)
		return ParallelResult{}, be
	}
	return ParallelResult{}, &StepError{Step: name, Code: "abi", Message: fmt.Sprintf("unexpected reply status %d", status)}
}

// runBranch runs branch i and ends the branch's pass with its end; it never returns: the code
// after the Parallel call is the parent's, never a branch's.
func runBranch(ctx *Context, i int, fn func(ctx *Context, i int) (any, error)) {
	out, err := runBranchGuarded(ctx, i, fn)
	var b []byte
	if err == nil {
		b, err = json.Marshal(out)
	}
	if err != nil {
		info, _ := json.Marshal(toErrorInfo(err))
		callBranchDone(outcomeError, info)
	} else {
		callBranchDone(outcomeOK, b)
	}
	panic("wfhost: branch_done returned")
}

// runBranchGuarded turns a panic in a branch's function into the branch's error, as a panic
// in a workflow body is the run's.
func runBranchGuarded(ctx *Context, i int, fn func(ctx *Context, i int) (any, error)) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = panicError("branch", r)
		}
	}()
	return fn(ctx, i)
}

// IsBranchFailed reports whether err is a Parallel call's failed join.
func IsBranchFailed(err error) bool {
	var be *BranchError
	return errors.As(err, &be)
}
