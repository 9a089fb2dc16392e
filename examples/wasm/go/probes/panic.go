package probes

import wf "github.com/wfhost/wfhost/guest-sdk/go"

// PanicInput says where Panic panics: in its body, or in a step (tried once) whose error the
// body returns.
type PanicInput struct {
	InStep bool `json:"inStep"`
}

// Panic panics in the workflow body or in a step callback, through a function of its own
// (panicHere), so the stack the SDK keeps in the error's details names it: the host's tests
// read the stack once there, and the code once in the message.
func Panic(ctx *wf.Context, in PanicInput) (int, error) {
	if !in.InStep {
		return panicHere("in the body"), nil
	}
	return wf.Step(ctx, "explode", func(*wf.StepContext) (int, error) {
		return panicHere("in a step"), nil
	}, wf.WithRetry(wf.RetryPolicy{Attempts: 1}))
}

func panicHere(where string) int {
	var items []int
	return items[len(where)] // index out of range: a runtime error, as most real panics are
}
