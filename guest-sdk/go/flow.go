package wf

import (
	"encoding/json"
	"time"
)

// Flow is a workflow's flow control (abi/ABI.md §7, "flow"): how many of its runs may run
// at once per key, how many may start per period per key, which starts replace a pending run,
// and the default priority of its runs. Keys are paths into the run's input ("$.customerId",
// "$.items[0].sku"); an empty key is one key for the whole workflow. The host enforces it
// across every host that shares its store.
type Flow struct {
	// Concurrency bounds the runs of a key started and not ended; a start past it waits.
	Concurrency *Concurrency
	// Rate bounds the runs of a key that start per Period; a start past it is delayed.
	Rate *Rate
	// Debounce delays a start by Period; a later start of its key within it replaces the
	// pending run's input.
	Debounce *Debounce
	// Priority is a run's default head start in seconds (-600 to 600); a start may give its own.
	Priority int
}

// Concurrency is Flow.Concurrency: at most Limit runs of one Key at once.
type Concurrency struct {
	Key   string
	Limit int
}

// Rate is Flow.Rate: at most Limit runs of one Key start per Period.
type Rate struct {
	Key    string
	Limit  int
	Period time.Duration
}

// Debounce is Flow.Debounce: starts of one Key within Period of each other make one run.
type Debounce struct {
	Key    string
	Period time.Duration
}

// MarshalJSON writes the flow in the ABI's shape (periods in milliseconds).
func (f Flow) MarshalJSON() ([]byte, error) {
	type keyLimit struct {
		Key      string `json:"key,omitempty"`
		Limit    int    `json:"limit,omitempty"`
		PeriodMs int64  `json:"periodMs,omitempty"`
	}
	var w struct {
		Concurrency *keyLimit `json:"concurrency,omitempty"`
		Rate        *keyLimit `json:"rate,omitempty"`
		Debounce    *keyLimit `json:"debounce,omitempty"`
		Priority    int       `json:"priority,omitempty"`
	}
	if c := f.Concurrency; c != nil {
		w.Concurrency = &keyLimit{Key: c.Key, Limit: c.Limit}
	}
	if r := f.Rate; r != nil {
		w.Rate = &keyLimit{Key: r.Key, Limit: r.Limit, PeriodMs: r.Period.Milliseconds()}
	}
	if d := f.Debounce; d != nil {
		w.Debounce = &keyLimit{Key: d.Key, PeriodMs: d.Period.Milliseconds()}
	}
	w.Priority = f.Priority
	return json.Marshal(w)
}
