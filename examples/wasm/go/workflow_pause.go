package main

import (
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

type pausingInput struct {
	// FailAttempts is how many attempts of the charge fail before one succeeds.
	FailAttempts int `json:"failAttempts"`
}

type pausingResult struct {
	Charge  string `json:"charge"`
	Shipped bool   `json:"shipped"`
}

func init() {
	wf.Register(wf.Workflow[pausingInput, pausingResult]{Name: "charge-or-pause", Version: chargeOrPauseVersion, Run: chargeOrPause})
}

// chargeOrPause charges with two attempts and pauses the run when both fail (onExhausted
// "pause"), for an operator to fix the cause and resume it: the resume tries the charge once
// more. Each attempt logs "charge attempt N". It is registered last (its file sorts after the
// other workflows'), as the other languages' examples declare it.
func chargeOrPause(ctx *wf.Context, in pausingInput) (pausingResult, error) {
	charge, err := wf.Step(ctx, chargeStep, func(sc *wf.StepContext) (string, error) {
		wf.Log(ctx, "charge attempt %d", sc.Attempt)
		if sc.Attempt <= in.FailAttempts {
			return "", wf.NewError("declined", "card declined on attempt %d", sc.Attempt)
		}
		return "ch-1", nil
	}, wf.WithRetry(wf.RetryPolicy{Attempts: 2, Backoff: "fixed", Base: 10 * time.Millisecond, OnExhausted: "pause"}))
	if err != nil {
		return pausingResult{}, err
	}
	shipped, err := wf.Step(ctx, "ship", func(sc *wf.StepContext) (bool, error) { return true, nil })
	if err != nil {
		return pausingResult{}, err
	}
	return pausingResult{Charge: charge, Shipped: shipped}, nil
}
