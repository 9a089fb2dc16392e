package clock

import (
	"sort"
	"sync"
	"time"
)

// Fake is a Clock that moves only when Advance or Set moves it; the timers, functions and
// tickers that come due then fire, in order of their due times. Safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*fakeTimer
}

// NewFake returns a Fake that reads start until it is moved.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now is the Fake's time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the clock d forward and fires what came due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	t := f.now.Add(d)
	f.mu.Unlock()
	f.Set(t)
}

// Set moves the clock to t (never back) and fires what came due, one due time at a time, so a
// timer that re-arms itself (a ticker) fires once per period passed.
func (f *Fake) Set(t time.Time) {
	for {
		f.mu.Lock()
		if t.Before(f.now) {
			t = f.now
		}
		sort.SliceStable(f.waiters, func(i, j int) bool { return f.waiters[i].due.Before(f.waiters[j].due) })
		if len(f.waiters) == 0 || f.waiters[0].due.After(t) {
			f.now = t
			f.mu.Unlock()
			return
		}
		w := f.waiters[0]
		f.waiters = f.waiters[1:]
		if w.due.After(f.now) {
			f.now = w.due
		}
		at := f.now
		if w.period > 0 {
			w.due = w.due.Add(w.period)
			f.waiters = append(f.waiters, w)
		}
		f.mu.Unlock()
		w.fire(at)
	}
}

// Timers is how many timers, functions and tickers are waiting: a test that must know a
// goroutine has armed its timer before it advances the clock waits for this to grow.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// NewTimer is a timer that fires when the Fake reaches now+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	return f.add(&fakeTimer{f: f, ch: make(chan time.Time, 1)}, d, 0)
}

// AfterFunc calls fn in its own goroutine when the Fake reaches now+d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	return f.add(&fakeTimer{f: f, fn: fn}, d, 0)
}

// NewTimerAt is a timer that fires when the Fake reaches t, however far it has moved since
// the caller read it.
func (f *Fake) NewTimerAt(t time.Time) Timer {
	return f.addAt(&fakeTimer{f: f, ch: make(chan time.Time, 1)}, t, 0)
}

// AfterFuncAt calls fn in its own goroutine when the Fake reaches t.
func (f *Fake) AfterFuncAt(t time.Time, fn func()) Timer {
	return f.addAt(&fakeTimer{f: f, fn: fn}, t, 0)
}

// NewTicker ticks every d of the Fake's time.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	return fakeTicker{f.add(&fakeTimer{f: f, ch: make(chan time.Time, 1)}, d, d)}
}

type fakeTicker struct{ t *fakeTimer }

func (k fakeTicker) C() <-chan time.Time { return k.t.ch }
func (k fakeTicker) Stop()               { k.t.Stop() }

func (f *Fake) add(t *fakeTimer, d, period time.Duration) *fakeTimer {
	f.mu.Lock()
	due := f.now.Add(d)
	f.mu.Unlock()
	return f.addAt(t, due, period)
}

// addAt arms t for due, read under the same lock as the time it is compared with: a Set under
// way either passes it on its way or has passed due already, and then it fires now.
func (f *Fake) addAt(t *fakeTimer, due time.Time, period time.Duration) *fakeTimer {
	f.mu.Lock()
	t.due, t.period = due, period
	f.waiters = append(f.waiters, t)
	passed := !due.After(f.now)
	f.mu.Unlock()
	if passed {
		f.Set(f.Now()) // due already: fire now, as time's would at once
	}
	return t
}

func (f *Fake) remove(t *fakeTimer) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, w := range f.waiters {
		if w == t {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			return true
		}
	}
	return false
}

type fakeTimer struct {
	f      *Fake
	ch     chan time.Time
	fn     func()
	due    time.Time
	period time.Duration // tickers
}

func (t *fakeTimer) fire(at time.Time) {
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.ch <- at:
	default: // a tick nobody took, as time's tickers drop them
	}
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool { return t.f.remove(t) }

func (t *fakeTimer) Reset(d time.Duration) bool {
	active := t.f.remove(t)
	t.f.add(t, d, t.period)
	return active
}

func (t *fakeTimer) ResetAt(at time.Time) bool {
	active := t.f.remove(t)
	t.f.addAt(t, at, t.period)
	return active
}
