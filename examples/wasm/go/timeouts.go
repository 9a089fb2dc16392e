package main

import (
	"errors"
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

type timeoutsInput struct {
	HangAttempts int   `json:"hangAttempts"` // the first attempts that never return
	TimeoutMs    int64 `json:"timeoutMs"`    // each attempt's timeout; 0: none but the activation's wall time
	Attempts     int   `json:"attempts"`     // the step's attempts; default 3
}

type timeoutsResult struct {
	Attempt int    `json:"attempt,omitempty"` // the attempt that returned
	Failed  string `json:"failed,omitempty"`  // the step's final error code, when every attempt hung
}

func init() {
	wf.Register(wf.Workflow[timeoutsInput, timeoutsResult]{Name: "timeouts", Version: "1", Run: timeouts})
}

// timeouts runs one step whose first HangAttempts attempts never return: the host stops each
// at its timeout and retries the step (abi/ABI.md §4.4). With every attempt hung, the
// workflow sees the step's failure and completes saying so.
func timeouts(ctx *wf.Context, in timeoutsInput) (timeoutsResult, error) {
	attempts := in.Attempts
	if attempts == 0 {
		attempts = 3
	}
	n, err := wf.Step(ctx, "slow-call", func(sc *wf.StepContext) (int, error) {
		if sc.Attempt <= in.HangAttempts {
			spin()
		}
		return sc.Attempt, nil
	}, wf.WithTimeout(time.Duration(in.TimeoutMs)*time.Millisecond),
		wf.WithRetry(wf.RetryPolicy{Attempts: attempts, Backoff: "fixed", Base: time.Millisecond}))
	var se *wf.StepError
	if errors.As(err, &se) {
		return timeoutsResult{Failed: se.Code}, nil
	}
	return timeoutsResult{Attempt: n}, err
}

// spin never returns: a callback stuck in a loop, which only the host can stop.
func spin() {
	for {
	}
}
