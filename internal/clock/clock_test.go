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
