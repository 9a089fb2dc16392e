package wf

import (
	"encoding/json"
	"fmt"
	"time"
)

// Child workflows (abi/ABI.md §4.16): a workflow starts another workflow of its tenant as a
// durable step, exactly once, and awaits its result (RunChild) or detaches from it
// (StartChild).

// ChildOption adjusts a RunChild or a StartChild.
type ChildOption func(*childRequest)

// ChildID gives the child run its id (its idempotency key) instead of the derived
// "<parent run id>:<step key>". An id another run holds fails the step with code
// child_refused.
func ChildID(id string) ChildOption { return func(r *childRequest) { r.ID = id } }

// ChildVersion runs the child on that version of its workflow instead of the latest.
func ChildVersion(version string) ChildOption {
	return func(r *childRequest) { r.Version = version }
}

// ChildTimeout gives the child run a deadline d after it starts (its run_timeout).
func ChildTimeout(d time.Duration) ChildOption {
	return func(r *childRequest) { r.TimeoutMs = d.Milliseconds() }
}

// AbandonOnCancel leaves the child running when the parent is cancelled or terminated; by
// default an awaited child is cancelled with its parent (a detached one is always abandoned
// unless this option's opposite, CancelWithParent, is given).
func AbandonOnCancel() ChildOption {
	return func(r *childRequest) { r.ParentClose = "abandon" }
}

// CancelWithParent cancels a detached child when its parent is cancelled or terminated.
func CancelWithParent() ChildOption {
	return func(r *childRequest) { r.ParentClose = "cancel" }
}

type childRequest struct {
	Workflow    string          `json:"workflow"`
	Version     string          `json:"version,omitempty"`
	Input       json.RawMessage `json:"input"`
	ID          string          `json:"id,omitempty"`
	TimeoutMs   int64           `json:"timeoutMs,omitempty"`
	Detach      bool            `json:"detach,omitempty"`
	ParentClose string          `json:"parentClose,omitempty"`
}

// RunChild starts a run of workflow with input as the durable step name and waits for its
// end, the parent holding no instance meanwhile: it returns the child's output, or a
// *StepError with code child_failed (the child failed or was cancelled; Details holds its
// runId, status and error), child_refused (no such workflow, or the id is another run's) or
// cancelled (this run was cancelled while it waited: the child is cancelled too, unless
// AbandonOnCancel). It must not be called inside a step callback.
func RunChild[T any](ctx *Context, name, workflow string, input any, opts ...ChildOption) (T, error) {
	var zero T
	status, data, err := childRun(ctx, name, workflow, input, false, opts)
	if err != nil {
		return zero, err
	}
	switch status {
	case statusOK:
		return decodeStepOutput[T](name, data)
	case statusStepFailed:
		return zero, stepError(name, data)
	}
	return zero, &StepError{Step: name, Code: "abi", Message: fmt.Sprintf("unexpected reply status %d", status)}
}

// StartChild starts a run of workflow with input as the durable step name and returns its id
// at once, without waiting for it: the child runs on whatever the parent does (and, by
// default, whatever becomes of the parent). Errors are RunChild's, but child_failed.
func StartChild(ctx *Context, name, workflow string, input any, opts ...ChildOption) (string, error) {
	status, data, err := childRun(ctx, name, workflow, input, true, opts)
	if err != nil {
		return "", err
	}
	switch status {
	case statusOK:
		started, err := decodeStepOutput[struct {
			RunID string `json:"runId"`
		}](name, data)
		return started.RunID, err
	case statusStepFailed:
		return "", stepError(name, data)
	}
	return "", &StepError{Step: name, Code: "abi", Message: fmt.Sprintf("unexpected reply status %d", status)}
}

func childRun(ctx *Context, name, workflow string, input any, detach bool, opts []ChildOption) (int32, []byte, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return 0, nil, &StepError{Step: name, Code: "invalid_input", Message: "encode the child's input: " + err.Error()}
	}
	req := childRequest{Workflow: workflow, Input: raw, Detach: detach}
	for _, o := range opts {
		o(&req)
	}
	b, _ := json.Marshal(req)
	status, data := callChildRun([]byte(name), b)
	if status == statusQuery {
		// A child step the journal has not ended is a query's frontier like any durable call
		// (abi/ABI.md §4.17): the query is answered here and the call never returns.
		ctx.answerQuery(data)
	}
	return status, data, nil
}
