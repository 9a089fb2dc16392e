package clock

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Clock tells the time and makes timers. Real and *Fake implement it; both are safe for
// concurrent use.
//
// A wake-up meant for a moment (a run's due time, a grace period's end) is armed with the At
// forms, not with a duration the caller works out from Now: on a Fake that a test is moving,
// the clock can move between the caller's Now and the arming, and the timer then lands that
// much late. A Set moving a Fake three days on passes every timer due on the way, and a claim
// loop that read the clock at day 2 and armed its poll for "9h56m from now" at day 3 woke ten
// hours after the run it was waiting for (wfhost test's crash variants, stop 35).
type Clock interface {
	Now() time.Time
	// NewTimer, AfterFunc and NewTicker are time's, on this clock.
	NewTimer(d time.Duration) Timer
	AfterFunc(d time.Duration, f func()) Timer
	NewTicker(d time.Duration) Ticker
	// NewTimerAt and AfterFuncAt fire when the clock reaches t: at once if it has.
	NewTimerAt(t time.Time) Timer
	AfterFuncAt(t time.Time, f func()) Timer
}

// Timer is a time.Timer of a Clock: C fires once, Stop and Reset are time.Timer's; ResetAt
// re-arms it for the moment t.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
	ResetAt(t time.Time) bool
}

// Ticker is a time.Ticker of a Clock.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Since is time.Since on c.
func Since(c Clock, t time.Time) time.Duration { return c.Now().Sub(t) }

// Until is time.Until on c.
func Until(c Clock, t time.Time) time.Duration { return t.Sub(c.Now()) }

// Earlier is the earlier of a and b; Later, the later.
func Earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func Later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// After is time.After on c; the timer is not stopped, so use it only where the wait ends the
// caller's work either way (a shutdown's grace period, a pause before a retry).
func After(c Clock, d time.Duration) <-chan time.Time { return c.NewTimer(d).C() }

// Real is the system clock.
type Real struct{}

func (Real) Now() time.Time { return time.Now() }

func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

func (Real) AfterFunc(d time.Duration, f func()) Timer { return realTimer{time.AfterFunc(d, f)} }

func (Real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

// The system clock cannot jump between a read and an arming the way a Fake can (its timers
// run on the monotonic clock), so its At forms are time.Until's.
func (Real) NewTimerAt(t time.Time) Timer { return realTimer{time.NewTimer(time.Until(t))} }

func (Real) AfterFuncAt(t time.Time, f func()) Timer {
	return realTimer{time.AfterFunc(time.Until(t), f)}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }
func (r realTimer) ResetAt(t time.Time) bool   { return r.t.Reset(time.Until(t)) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// Rand is a source of random numbers in [0, 1) (the retry jitter). Safe for concurrent use.
type Rand interface{ Float64() float64 }

// RealRand is math/rand/v2's global source.
type RealRand struct{}

func (RealRand) Float64() float64 { return rand.Float64() }

// Seeded is a reproducible Rand.
func Seeded(seed uint64) Rand {
	return &lockedRand{r: rand.New(rand.NewPCG(seed, seed))}
}

type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}
