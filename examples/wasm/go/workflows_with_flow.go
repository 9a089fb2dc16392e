package main

import (
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

type digestInput struct {
	CustomerID string `json:"customerId"`
}

type digestResult struct {
	CustomerID string `json:"customerId"`
	Sent       bool   `json:"sent"`
}

// The file's name sorts after workflows_parallel.go, so digest is registered last, as the
// other languages' example modules declare it.
func init() {
	wf.Register(wf.Workflow[digestInput, digestResult]{Name: "digest", Version: "1", Run: digest,
		// Flow control per customer (abi/ABI.md §7): one digest of a customer at a time, at
		// most ten a minute, a burst of starts within five seconds makes one run (the last
		// start's input), and digests yield to other work by 30 seconds.
		Flow: &wf.Flow{
			Concurrency: &wf.Concurrency{Key: "$.customerId", Limit: 1},
			Rate:        &wf.Rate{Key: "$.customerId", Limit: 10, Period: time.Minute},
			Debounce:    &wf.Debounce{Key: "$.customerId", Period: 5 * time.Second},
			Priority:    -30,
		},
		// Completion hooks: a sent digest starts a follow-up run (the steps example stands in
		// for one; it reads the ended run, {"runId", "status", ...}, as zero steps), and a
		// digest that failed or was cancelled is posted to the operators' webhook.
		OnEnd: []wf.Hook{
			{When: []string{"completed"}, Start: &wf.HookStart{Workflow: "steps", Version: "1"}},
			{When: []string{"failed", "cancelled"}, Webhook: "https://ops.example.com/wfhost/digest"},
		},
	})
}

// digest sends a customer's digest in one step; the declarations above are the point of it.
func digest(ctx *wf.Context, in digestInput) (digestResult, error) {
	return wf.Step(ctx, "send-digest", func(sc *wf.StepContext) (digestResult, error) {
		return digestResult{CustomerID: in.CustomerID, Sent: true}, nil
	})
}
