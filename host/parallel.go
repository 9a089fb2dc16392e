package host

import (
	"context"
	"errors"

	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
)

// ParallelRunner is a Handler that serves parallel_run (ABI.md §4.18): RunParallel forks the
// branches req describes as the durable step name, or answers it from the journal: StatusOK
// with a ParallelResult, StatusStepFailed, or, in a branch's own pass at the call that forked
// it, StatusBranch with the branch's index. The request is decoded and checked by
// abi.DecodeParallel before RunParallel sees it.
type ParallelRunner interface {
	RunParallel(ctx context.Context, name string, req abi.Parallel) (Reply, error)
}

func (st *state) parallelRun(ctx context.Context, mem api.Memory, nameArg, reqArg span) Reply {
	st.notInStep(abi.FuncParallelRun)
	name := st.name(mem, abi.FuncParallelRun, nameArg)
	req, err := abi.DecodeParallel(st.read(mem, abi.FuncParallelRun, reqArg, abi.MaxOptionsBytes, "request"))
	if err != nil {
		st.violation("%s %q: %v", abi.FuncParallelRun, name, err)
	}
	runner, ok := st.handler.(ParallelRunner)
	if !ok {
		st.violation("%s: this host runs no parallel branches", abi.FuncParallelRun)
	}
	r := st.answer(runner.RunParallel(ctx, name, req))
	if r.Status == abi.StatusBranch {
		st.branched = true
	}
	return r
}

// notBranched traps a call that would end a branch's pass other than by branch_done: the
// branch's end is branch_done's (ABI.md §4.18), and a branch cannot continue as new.
func (st *state) notBranched(fn string) {
	if st.branched {
		st.violation("%s called in a branch's pass; a branch ends with %s", fn, abi.FuncBranchDone)
	}
}

// errBranchDone unwinds a guest that called branch_done; passEnded turns it into the Result.
var errBranchDone = errors.New("branch done")

// branchDone ends a branch's pass with its output or error, as complete or fail would end a
// run's (the same limits, storability and redaction), and never returns to the guest: the
// branch is over, and code after it would be the parent's, which the branch must not run.
func (st *state) branchDone(mem api.Memory, outcome abi.Outcome, dataArg span) {
	st.notInStep(abi.FuncBranchDone)
	if !st.branched {
		st.violation("%s called in a pass that parallel_run did not answer BRANCH", abi.FuncBranchDone)
	}
	switch outcome {
	case abi.OutcomeOK:
		st.complete(mem, dataArg)
	case abi.OutcomeError:
		st.fail(mem, dataArg)
	default:
		st.violation("%s: outcome %d is neither 0 (ok) nor 1 (error)", abi.FuncBranchDone, outcome)
	}
	st.branchEnded = true
	panic(errBranchDone)
}
