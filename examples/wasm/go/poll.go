package main

import (
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

type pollInput struct {
	Until      int   `json:"until"`      // the status is ready on this check; default 3
	IntervalMs int64 `json:"intervalMs"` // pause between checks; default 1s
}

type pollResult struct {
	Checks int `json:"checks"`
}

func init() {
	wf.Register(wf.Workflow[pollInput, pollResult]{Name: "poll", Version: "1", Run: poll})
}

// poll checks a status and sleeps until it is ready: each repetition of a step name gets its
// own journal key (check-status, check-status#1, ...).
func poll(ctx *wf.Context, in pollInput) (pollResult, error) {
	until := max(in.Until, 1)
	interval := time.Second
	if in.IntervalMs > 0 {
		interval = time.Duration(in.IntervalMs) * time.Millisecond
	}
	for check := 1; ; check++ {
		ready, err := wf.Step(ctx, "check-status", func(sc *wf.StepContext) (bool, error) {
			return check >= until, nil
		})
		if err != nil {
			return pollResult{}, err
		}
		if ready {
			return pollResult{Checks: check}, nil
		}
		if err := wf.Sleep(ctx, "backoff", interval); err != nil {
			return pollResult{}, err // cancelled
		}
	}
}
