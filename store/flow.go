package store

import (
	"time"

	"github.com/wfhost/wfhost/abi"
)

// Flow control (abi.Flow): a workflow's concurrency, rate and debounce per key, and priority.
// Both stores enforce it when a run is started, however (every insert passes one place per
// store, startRun; store/RATIONALE.md, "One gate"), and when a run ends, and
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

// FlowKeyRows are the rows of a flow start's keys, as a store keeps them: each is locked (or
// made) in the start's transaction when it is read, so that no other start or end of the key
// can change it before that transaction ends.
type FlowKeyRows interface {
	// Lock reads the key's row of kind ("debounce", "rate" or "concurrency"), made with limit
	// when it is new, and holds it for the transaction.
	Lock(kind, key string, limit int) (FlowKeyRow, error)
	// Take writes the key's row: a concurrency slot taken (slot), the starts a rate key keeps
	// (nil: unchanged), the run a debounce key holds pending ("" : unchanged).
	Take(kind, key string, slot bool, starts []time.Time, pendingRun string) error
}

// FlowKeyRow is a key's row as Lock reads it: how many runs hold one of its concurrency
// slots and its limit, a rate key's last starts (oldest first), a debounce key's pending run.
type FlowKeyRow struct {
	Active, Limit int
	Starts        []time.Time
	Pending       string
}

// FlowAdmission is where a new run is placed under its workflow's flow (AdmitFlow).
type FlowAdmission struct {
	// AvailableAt is when the run may be claimed, were it not held: now, less its priority in
	// seconds of head start, or later when its rate slot or its debounce period says so.
	AvailableAt time.Time
	// Held says the run waits for a concurrency slot: it is not claimable at all until a run
	// of its key ends and hands it one.
	Held bool
	// The keys the run is counted under (nil: the flow has no such part), and the start its
	// rate gave it.
	ConcurrencyKey, RateKey, DebounceKey *string
	RateAt                               *time.Time
}

// AdmitFlow places a new run under fs's flow at now: it takes the run's rate slot and its
// concurrency slot, if one is free, from rows, in that order; a start that debounces has
// locked its debounce key before (and answered a pending run instead, if there was one), so
// every store takes a start's keys in one order: debounce, rate, concurrency. The debounce key
// is given its pending run by the store once the run is inserted.
func AdmitFlow(fs FlowStart, now time.Time, rows FlowKeyRows) (FlowAdmission, error) {
	flow := fs.Flow
	a := FlowAdmission{AvailableAt: now.Add(-time.Duration(fs.Priority) * time.Second)}
	if r := flow.Rate; r != nil {
		row, err := rows.Lock("rate", fs.Keys.Rate, r.Limit)
		if err != nil {
			return FlowAdmission{}, err
		}
		slot, keep := RateSlot(row.Starts, r.Limit, time.Duration(r.PeriodMs)*time.Millisecond, now)
		if err := rows.Take("rate", fs.Keys.Rate, false, keep, ""); err != nil {
			return FlowAdmission{}, err
		}
		if slot.After(now) && slot.After(a.AvailableAt) {
			a.AvailableAt = slot
		}
		a.RateKey, a.RateAt = &fs.Keys.Rate, &slot
	}
	if d := flow.Debounce; d != nil {
		if at := now.Add(time.Duration(d.PeriodMs) * time.Millisecond); at.After(a.AvailableAt) {
			a.AvailableAt = at
		}
		a.DebounceKey = &fs.Keys.Debounce
	}
	if c := flow.Concurrency; c != nil {
		row, err := rows.Lock("concurrency", fs.Keys.Concurrency, c.Limit)
		if err != nil {
			return FlowAdmission{}, err
		}
		a.Held = row.Active >= row.Limit
		if err := rows.Take("concurrency", fs.Keys.Concurrency, !a.Held, nil, ""); err != nil {
			return FlowAdmission{}, err
		}
		a.ConcurrencyKey = &fs.Keys.Concurrency
	}
	return a, nil
}
