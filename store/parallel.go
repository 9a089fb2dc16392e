package store

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/wfhost/wfhost/abi"
)

// Fork is what ForkBranches forks: one NewRun per branch, in branch order (the same workflow,
// version, module and input as the parent's), how their join is decided (abi.JoinAll,
// abi.JoinFirst, abi.JoinAllSettled) and how many of them are claimable at once (at least 1).
type Fork struct {
	Branches      []NewRun
	Join          string
	MaxConcurrent int
}

// BranchKey is the parent key of branch i of the parallel step key: how a branch shows as
// its parent's child (ChildLink.ParentKey).
func BranchKey(key string, i int) string { return key + "[" + strconv.Itoa(i) + "]" }

// BranchFailure is the error a parallel step fails with when its join fails:
// abi.CodeBranchFailed, never retried, its details the branch whose end decided it (its
// index, run id, status and error). store/postgres builds the same value in SQL (migration
// 023); the store suite holds the two to it.
func BranchFailure(branch int, runID string, status RunStatus, branchErr *abi.ErrorInfo) abi.ErrorInfo {
	why := "no error"
	if branchErr != nil {
		why = branchErr.Code + ": " + branchErr.Message
	}
	details, _ := json.Marshal(abi.BranchFailure{Branch: branch, RunID: runID, Status: string(status), Error: branchErr})
	return abi.ErrorInfo{
		Code:         abi.CodeBranchFailed,
		Message:      fmt.Sprintf("branch %d ended %s: %s", branch, status, why),
		NonRetryable: true,
		Details:      details,
	}
}

// A branch's end as its fork records it (the status column of run_branches, in both stores):
// held and live before it.
const (
	BranchCompleted = "completed"
	BranchFailed    = "failed"
	BranchCancelled = "cancelled"
)

// Join decisions (JoinDecision).
const (
	JoinOK   = "ok"
	JoinFail = "fail"
)

// JoinDecision decides a fork's join at the end of one of its branches: ended is how that
// branch ended (BranchCompleted, BranchFailed, BranchCancelled), ok and failed how many of
// the fork's branches have ended so and how, that one included, of branches. It returns
// JoinOK, JoinFail, or "" while undecided. store/postgres decides the same in SQL (migration
// 023).
func JoinDecision(join, ended string, ok, failed, branches int) string {
	switch join {
	case abi.JoinAll:
		if ended != BranchCompleted {
			return JoinFail
		}
		if ok == branches {
			return JoinOK
		}
	case abi.JoinFirst:
		if ended == BranchCompleted {
			return JoinOK
		}
		if failed == branches {
			return JoinFail
		}
	default:
		if ok+failed == branches {
			return JoinOK
		}
	}
	return ""
}
