package clock_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/internal/clock"
)

var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func fired(ch <-chan time.Time) (time.Time, bool) {
	select {
	case t := <-ch:
		return t, true
	default:
		return time.Time{}, false
	}
}

func TestFakeTimerFiresWhenDue(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(start)
	tm := f.NewTimer(time.Second)
	f.Advance(999 * time.Millisecond)
	if _, ok := fired(tm.C()); ok {
		t.Fatal("fired early")
	}
	f.Advance(time.Millisecond)
	if at, ok := fired(tm.C()); !ok || !at.Equal(start.Add(time.Second)) {
		t.Fatalf("fired %v %v, want at %v", at, ok, start.Add(time.Second))
	}
	if tm.Reset(time.Minute) {
		t.Fatal("Reset of a fired timer says it was active")
	}
	if !tm.Stop() {
		t.Fatal("Stop of a reset timer says it was not active")
	}
	f.Advance(time.Hour)
	if _, ok := fired(tm.C()); ok {
		t.Fatal("a stopped timer fired")
	}
}

func TestFakeTickerAndAfterFunc(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(start)
	tk := f.NewTicker(time.Second)
	done := make(chan struct{})
	var calls atomic.Int32
	f.AfterFunc(1500*time.Millisecond, func() { calls.Add(1); close(done) })
	f.Advance(time.Second)
	if _, ok := fired(tk.C()); !ok {
		t.Fatal("no tick after one period")
	}
	f.Advance(time.Second)
	<-done
	if _, ok := fired(tk.C()); !ok {
		t.Fatal("no tick after two periods")
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("AfterFunc called %d times", n)
	}
	tk.Stop()
	if f.Timers() != 0 {
		t.Fatalf("%d timers left", f.Timers())
	}
	if got := f.Now(); !got.Equal(start.Add(2 * time.Second)) {
		t.Fatalf("now %v", got)
	}
}

func TestSeededRandRepeats(t *testing.T) {
	t.Parallel()
	a, b := clock.Seeded(7), clock.Seeded(7)
	for range 10 {
		if x, y := a.Float64(), b.Float64(); x != y || x < 0 || x >= 1 {
			t.Fatalf("%v %v", x, y)
		}
	}
}

// A timer armed for a moment fires at that moment, however far the clock moved between the
// caller's reading and the arming; one armed for a duration worked out from that reading lands
// as much later. A Set passing a day at a time while a claim loop arms its poll is that move.
func TestTimersArmedForAMomentFireThenAfterTheClockMoved(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(start)
	due := start.Add(10 * time.Hour)
	read := f.Now()
	f.Advance(4 * time.Hour) // the clock moves between the reading and the arming
	at := f.NewTimerAt(due)
	var called atomic.Bool
	done := make(chan struct{})
	f.AfterFuncAt(due, func() { called.Store(true); close(done) })
	relative := f.NewTimer(clock.Until(clock.NewFake(read), due))
	f.Set(due)
	if got, ok := fired(at.C()); !ok || !got.Equal(due) {
		t.Fatalf("NewTimerAt fired %v %v, want at %v", got, ok, due)
	}
	<-done
	if !called.Load() {
		t.Fatal("AfterFuncAt did not call its function")
	}
	if _, ok := fired(relative.C()); ok {
		t.Fatal("the timer armed for 10h from a 4h-old reading fired at 10h: the test shows nothing")
	}
	f.Advance(4 * time.Hour)
	if _, ok := fired(relative.C()); !ok {
		t.Fatal("the relative timer never fired")
	}

	// A moment passed already fires at once; ResetAt re-arms for a moment.
	past := f.NewTimerAt(start)
	if got, ok := fired(past.C()); !ok || !got.Equal(f.Now()) {
		t.Fatalf("a timer for a passed moment fired %v %v, want at once (%v)", got, ok, f.Now())
	}
	if past.ResetAt(f.Now().Add(time.Minute)) {
		t.Fatal("ResetAt of a fired timer says it was active")
	}
	f.Advance(59 * time.Second)
	if _, ok := fired(past.C()); ok {
		t.Fatal("ResetAt's timer fired early")
	}
	f.Advance(time.Second)
	if _, ok := fired(past.C()); !ok {
		t.Fatal("ResetAt's timer did not fire at its moment")
	}
}

func TestRealTimersArmedForAMoment(t *testing.T) {
	t.Parallel()
	c := clock.Real{}
	tm := c.NewTimerAt(time.Now().Add(-time.Second))
	<-tm.C() // a passed moment fires at once
	done := make(chan struct{})
	c.AfterFuncAt(time.Now().Add(time.Millisecond), func() { close(done) })
	<-done
	if tm.ResetAt(time.Now().Add(time.Millisecond)) {
		t.Fatal("ResetAt of a fired timer says it was active")
	}
	<-tm.C()
}

func TestEarlierAndLater(t *testing.T) {
	t.Parallel()
	a, b := start, start.Add(time.Second)
	if clock.Earlier(a, b) != a || clock.Earlier(b, a) != a || clock.Later(a, b) != b || clock.Later(b, a) != b {
		t.Fatal("Earlier or Later chose the wrong time")
	}
}
