package api

import (
	"net/http"
	"time"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/store"
)

// flow adds to v where the run stands under its workflow's flow control, for a run that has
// not begun (one read, only for such a run): the console and `wfhost runs get` show why it
// waits.
func (h *Handler) flow(r *http.Request, run store.Run, v *wire.Run) error {
	if run.Activations > 0 || run.Status != store.StatusPending && run.Status != store.StatusPaused {
		return nil
	}
	f, found, err := h.cfg.Store.RunFlow(r.Context(), tenant(r), run.ID)
	if err != nil || !found {
		return err
	}
	v.Flow = viewFlow(run, f, time.Now())
	return nil
}

// viewFlow is f as the API shows it, with why run waits at now.
func viewFlow(run store.Run, f store.RunFlow, now time.Time) *wire.RunFlow {
	out := &wire.RunFlow{Priority: f.Priority}
	if c := f.Concurrency; c != nil {
		out.Concurrency = &wire.FlowConcurrencyState{Key: c.Key, Limit: c.Limit, Active: c.Active, Held: c.Held}
	}
	if rt := f.Rate; rt != nil {
		out.Rate = &wire.FlowRateState{Key: rt.Key, Limit: rt.Limit, PeriodMs: rt.Period.Milliseconds(), NotBefore: rt.NotBefore}
	}
	if d := f.Debounce; d != nil {
		out.Debounce = &wire.FlowDebounceState{Key: d.Key, PeriodMs: d.Period.Milliseconds()}
	}
	switch {
	case f.Concurrency != nil && f.Concurrency.Held:
		out.Waiting = "concurrency"
	case run.AvailableAt == nil || !run.AvailableAt.After(now):
	case f.Debounce != nil:
		out.Waiting = "debounce"
	case f.Rate != nil && f.Rate.NotBefore.After(now):
		out.Waiting = "rate"
	case f.Priority < 0:
		out.Waiting = "priority"
	}
	return out
}
