package main

import (
	"encoding/json"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

type relayInput struct {
	RunID     string          `json:"runId"`     // the run to signal; "" with broadcast
	Broadcast bool            `json:"broadcast"` // send to the whole tenant instead
	Event     string          `json:"event"`
	Payload   json.RawMessage `json:"payload"`
}

func init() {
	wf.Register(wf.Workflow[relayInput, wf.EventSent]{Name: "relay", Version: "1", Run: relay,
		Retry: &wf.RetryPolicy{Attempts: 1}})
}

// relay sends one event, to a run or to the whole tenant, from a step (abi/ABI.md §4.13): the
// send lands once however often the step runs, and its outcome is the run's output. A
// refused event (no such run, the run ended) fails the run with the code event_refused.
func relay(ctx *wf.Context, in relayInput) (wf.EventSent, error) {
	return wf.Step(ctx, "notify", func(sc *wf.StepContext) (wf.EventSent, error) {
		if in.Broadcast {
			return sc.Broadcast(in.Event, in.Payload)
		}
		return sc.Signal(in.RunID, in.Event, in.Payload)
	})
}
