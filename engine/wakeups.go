package engine

import (
	"sync"
	"time"

	"github.com/wfhost/wfhost/internal/clock"
)

// wakeups is the claimer's one timer for the runs this host suspended until a time, whose
// passes it does not hold parked (those have timers of their own, bounded by the parking
// budget). A timer per suspension was one live runtime timer per sleeping run: a daemon holding
// 1,000,000 runs asleep for hours grew by about 180 MB (BENCHMARKS.md, "At scale"). Only the
// earliest wake-up is kept; a later one is noted, and when the timer fires the claimer asks the
// store for the next due time (Store.NextWakeup), which is at or before every wake-up it left
// out, since their runs are still in the store; a timer armed from that answer asks again when
// it fires (it may be only the first of them: a lease that runs out, say). Asking once and
// then arming without asking lost every later wake-up on a fake clock one run in four
// (TestSuspendedRunsShareOneTimer).
type wakeups struct {
	clock clock.Clock
	// fire wakes the claimer; askNext says it must ask the store when to wake next.
	fire func(askNext bool)

	mu    sync.Mutex
	at    time.Time // when the armed timer fires; zero: none armed
	timer clock.Timer
	armed uint64 // counts the timers armed: a replaced timer that fires anyway does nothing
	// later: when the timer fires, the claimer must ask the store when to look next, for a
	// wake-up after at was asked for and left to the store's answer (or askAt asked it).
	later bool
}

// wakeAt makes the claimer look at t at the latest.
func (w *wakeups) wakeAt(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wakeAtLocked(t)
}

// askAt makes the claimer look at t at the latest, and ask the store then when to look next.
func (w *wakeups) askAt(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wakeAtLocked(t)
	w.later = true
}

func (w *wakeups) wakeAtLocked(t time.Time) {
	if !w.at.IsZero() {
		if !t.Before(w.at) {
			w.later = w.later || t.After(w.at)
			return
		}
		// t comes first: the armed time is left to the store's answer, like any later one.
		w.timer.Stop()
		w.later = true
	}
	w.armed++
	armed := w.armed
	w.at = t
	w.timer = w.clock.AfterFuncAt(t, func() { w.fired(armed) })
}

func (w *wakeups) fired(armed uint64) {
	w.mu.Lock()
	if armed != w.armed {
		w.mu.Unlock()
		return // replaced by an earlier one, which fires for both
	}
	later := w.later
	w.at, w.timer, w.later = time.Time{}, nil, false
	w.mu.Unlock()
	w.fire(later)
}

// stop disarms the timer: the claimer has stopped.
func (w *wakeups) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.armed++
	w.at, w.timer, w.later = time.Time{}, nil, false
}
