package store

import (
	"time"

	"github.com/wfhost/wfhost/abi"
)

// Flow control (abi.Flow): a workflow's concurrency, rate and debounce per key, and priority.
// Both stores enforce it when a client starts a run (CreateLeasedRun) and when a run ends, and
// never in the claim: a run held by its key's concurrency is not claimable at all (no
// available_at) until a run of its key ends and hands it the slot, in the transaction that
// ends that run, so the claim, the system's hottest statement, is the same for a run with
// flow control as for one without (engine/RATIONALE.md, "Flow control").

// RunFlow is where a run stands under its workflow's flow control (Store.RunFlow): what the
// API shows of a run that waits for it.
type RunFlow struct {
	// Priority is the run's priority in seconds of head start (abi.Flow.Priority).
	Priority int
	// Concurrency, when the workflow bounds concurrency, is the run's key and its state.
	Concurrency *FlowConcurrencyState
	// Rate, when the workflow bounds its rate, is the run's key and the start it was given.
	Rate *FlowRateState
	// Debounce, when the workflow debounces its starts, is the run's key.
	Debounce *FlowDebounceState
}

// FlowConcurrencyState is a run's concurrency key, its limit, how many of its runs hold a
// slot now, and whether this run waits for one.
type FlowConcurrencyState struct {
	Key    string
	Limit  int
	Active int
	Held   bool
}

// FlowRateState is a run's rate key and limit, and the earliest the rate let it start.
type FlowRateState struct {
	Key       string
	Limit     int
	Period    time.Duration
	NotBefore time.Time
}

// FlowDebounceState is a run's debounce key and period.
type FlowDebounceState struct {
	Key    string
	Period time.Duration
}

// FlowStart is a new run's place under its workflow's flow: its keys and the time it would be
// claimable were it not held. Stores compute it with FlowStartOf.
type FlowStart struct {
	Flow abi.Flow
	Keys abi.FlowKeys
	// Priority is the run's priority: the start's, else the workflow's.
	Priority int
}

// FlowStartOf evaluates the workflow's flow on a new run: its keys (an input without one wraps
// abi.ErrFlowKey) and its priority.
func FlowStartOf(f abi.Flow, n NewRun) (FlowStart, error) {
	keys, err := f.Keys(n.Input)
	if err != nil {
		return FlowStart{}, err
	}
	p := f.Priority
	if n.Priority != nil {
		p = *n.Priority
	}
	return FlowStart{Flow: f, Keys: keys, Priority: p}, nil
}

// RateSlot is when the next start of a rate key may be, given the times of its last starts
// (oldest first, at most limit of them): now, unless limit starts already fall in the period
// before now, else the period after the limit-th latest of them. It returns the starts to keep,
// the new one included.
func RateSlot(starts []time.Time, limit int, period time.Duration, now time.Time) (time.Time, []time.Time) {
	at := now
	if len(starts) >= limit {
		if next := starts[len(starts)-limit].Add(period); next.After(at) {
			at = next
		}
	}
	starts = append(starts, at)
	if len(starts) > limit {
		starts = starts[len(starts)-limit:]
	}
	return at, starts
}

// FlowOfRun assembles a RunFlow from a run's stored flow, keys and state (nil key: the flow
// has no such part), as both stores keep them.
func FlowOfRun(flow abi.Flow, priority int, concKey *string, held bool, active int, rateKey *string, rateAt *time.Time, debounceKey *string) RunFlow {
	f := RunFlow{Priority: priority}
	if flow.Concurrency != nil && concKey != nil {
		f.Concurrency = &FlowConcurrencyState{Key: *concKey, Limit: flow.Concurrency.Limit, Active: active, Held: held}
	}
	if flow.Rate != nil && rateKey != nil {
		f.Rate = &FlowRateState{Key: *rateKey, Limit: flow.Rate.Limit, Period: time.Duration(flow.Rate.PeriodMs) * time.Millisecond}
		if rateAt != nil {
			f.Rate.NotBefore = *rateAt
		}
	}
	if flow.Debounce != nil && debounceKey != nil {
		f.Debounce = &FlowDebounceState{Key: *debounceKey, Period: time.Duration(flow.Debounce.PeriodMs) * time.Millisecond}
	}
	return f
}
