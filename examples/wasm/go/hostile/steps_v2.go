package main

import (
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

type stepsInput struct {
	N       int   `json:"n"`
	SleepMs int64 `json:"sleepMs"`
}

// steps version 2 lives in this module so tests can deploy a second version of a workflow the
// examples module declares: runs started on version 1 stay there, new runs take version 2,
// whose output says which version ran.
func init() {
	wf.Register(wf.Workflow[stepsInput, map[string]int]{Name: "steps", Version: "2",
		Run: func(ctx *wf.Context, in stepsInput) (map[string]int, error) {
			sum := 0
			for i := range in.N {
				v, err := wf.Step(ctx, "s", func(sc *wf.StepContext) (int, error) { return i, nil })
				if err != nil {
					return nil, err
				}
				sum += v
				if in.SleepMs > 0 && i < in.N-1 {
					wf.Sleep(ctx, "pause", time.Duration(in.SleepMs)*time.Millisecond)
				}
			}
			return map[string]int{"sum": sum, "version": 2}, nil
		}})
}
