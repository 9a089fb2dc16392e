package main

import (
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

type stepsInput struct {
	N       int   `json:"n"`
	SleepMs int64 `json:"sleepMs"` // a durable sleep between steps when > 0
}

type stepsResult struct {
	Sum int `json:"sum"`
}

func init() {
	wf.Register(wf.Workflow[stepsInput, stepsResult]{Name: "steps", Version: "1", Run: steps})
}

// steps runs N trivial steps (keys s, s#1, ...), for crash tests and benchmarks. Each callback
// logs "step ran index=N", so tests can count how often each ran.
func steps(ctx *wf.Context, in stepsInput) (stepsResult, error) {
	sum := 0
	for i := range in.N {
		v, err := wf.Step(ctx, "s", func(sc *wf.StepContext) (int, error) {
			wf.Log(ctx, "step ran index=%d attempt=%d", i, sc.Attempt)
			return i, nil
		})
		if err != nil {
			return stepsResult{}, err
		}
		sum += v
		if in.SleepMs > 0 && i < in.N-1 {
			if err := wf.Sleep(ctx, "pause", time.Duration(in.SleepMs)*time.Millisecond); err != nil {
				return stepsResult{}, err // cancelled
			}
		}
	}
	return stepsResult{Sum: sum}, nil
}
