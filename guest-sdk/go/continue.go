package wf

import "encoding/json"

// ContinueOption adjusts a ContinueAsNew.
type ContinueOption func(*continueRequest)

// OnLatestVersion runs the next run on the workflow's most recently deployed version instead
// of this run's: a long-lived loop picks up new code at its next turn.
func OnLatestVersion() ContinueOption {
	return func(r *continueRequest) { r.LatestVersion = true }
}

type continueRequest struct {
	Input         json.RawMessage `json:"input"`
	LatestVersion bool            `json:"latestVersion,omitempty"`
}

// ContinueAsNew ends this run and starts a fresh run of the same workflow with input and an
// empty journal, linked to this one (abi/ABI.md §4.14): the way a workflow that loops forever
// keeps its journal short and stays under the step cap. The new run takes this run's
// idempotency key and the events signalled to it that no wait took.
//
// Under wfhost it never returns: the run ends at the call. It returns an error only when input
// cannot be encoded, so a workflow body ends with it:
//
//	return Out{}, wf.ContinueAsNew(ctx, next)
//
// It must not be called inside a step callback.
func ContinueAsNew(ctx *Context, input any, opts ...ContinueOption) error {
	raw, err := json.Marshal(input)
	if err != nil {
		return &Error{Code: "invalid_input", Message: "encode the next run's input: " + err.Error(), NonRetryable: true}
	}
	req := continueRequest{Input: raw}
	for _, o := range opts {
		o(&req)
	}
	b, _ := json.Marshal(req)
	callContinueAsNew(b)
	return &Error{Code: "continue_as_new", Message: "continue_as_new returned: the host did not end the run"}
}
