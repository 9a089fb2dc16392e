package store

import (
	"encoding/json"
	"fmt"

	"github.com/wfhost/wfhost/abi"
)

// ChildFailure is the error an awaited child's parent step fails with when the child's chain
// ends failed or cancelled (StartChild): abi.CodeChildFailed, never retried (the child ran its
// own retries), its details the child's run id, status and error. store/postgres builds the
// same value in SQL (migration 020); the store suite holds the two to it.
func ChildFailure(runID, workflow string, status RunStatus, childErr *abi.ErrorInfo) abi.ErrorInfo {
	why := "no error"
	if childErr != nil {
		why = childErr.Code + ": " + childErr.Message
	}
	details, _ := json.Marshal(struct {
		RunID  string         `json:"runId"`
		Status RunStatus      `json:"status"`
		Error  *abi.ErrorInfo `json:"error"`
	}{runID, status, childErr})
	return abi.ErrorInfo{
		Code:         abi.CodeChildFailed,
		Message:      fmt.Sprintf("child workflow %s ended %s: %s", workflow, status, why),
		NonRetryable: true,
		Details:      details,
	}
}

// ChildRefused is the error a child step fails with when its id names another run.
func ChildRefused(id, workflow string) abi.ErrorInfo {
	return abi.ErrorInfo{
		Code:         abi.CodeChildRefused,
		Message:      fmt.Sprintf("child id %q is held by another run of workflow %s", id, workflow),
		NonRetryable: true,
	}
}

// ChildFlowRefused is the error of a child step whose input names no key of its workflow's
// flow control (abi.ErrFlowKey, err): the child is refused as the workflow's own start would
// be, and a retry with the same input would be refused again.
func ChildFlowRefused(workflow string, err error) abi.ErrorInfo {
	return abi.ErrorInfo{
		Code:         abi.CodeChildRefused,
		Message:      fmt.Sprintf("child of workflow %s refused: %v", workflow, err),
		NonRetryable: true,
	}
}
