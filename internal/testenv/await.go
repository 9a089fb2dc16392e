package testenv

import (
	"fmt"
	"testing"
	"time"
)

// The one way a test waits for something another goroutine or process does: it polls a
// condition until the condition holds, and gives up after a bound. The bound is a liveness
// bound (the thing happens at all), never a timing assertion, so it is generous; what a test
// checks stays in the condition.

// Polling starts fast, so a condition that holds a moment later costs the test nothing, and
// backs off so that a slow one (a run across daemon restarts) does not load the machine.
const (
	firstPoll = 5 * time.Millisecond
	maxPoll   = 100 * time.Millisecond
)

// deadlineMargin is kept free before the test binary's own deadline (go test -timeout), so a
// wait that would outlast it fails with its own message instead of the binary's panic.
const deadlineMargin = 5 * time.Second

// Await calls cond until it returns nil and fails t when within has passed first. cond's error
// says what is not so yet ("run 42 is running, want completed"); the failure reports the last
// one with how long and how often it was tried. cond runs on the test's goroutine, so it may
// call t.Fatal itself.
func Await(t testing.TB, within time.Duration, cond func() error) {
	t.Helper()
	if err := Poll(t, within, cond); err != nil {
		t.Fatal(err)
	}
}

// Poll is Await that returns the failure instead of failing t, for a caller that adds what
// only a failure needs (a daemon's log tail) or goes on.
func Poll(t testing.TB, within time.Duration, cond func() error) error {
	t.Helper()
	start := time.Now()
	deadline := start.Add(within)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok && end.Add(-deadlineMargin).Before(deadline) {
			deadline = end.Add(-deadlineMargin)
		}
	}
	delay := firstPoll
	for tries := 1; ; tries++ {
		err := cond()
		if err == nil {
			return nil
		}
		if !time.Now().Before(deadline) {
			return &TimeoutError{Waited: time.Since(start).Round(time.Millisecond), Tries: tries, Last: err}
		}
		time.Sleep(min(delay, time.Until(deadline)))
		delay = min(2*delay, maxPoll)
	}
}

// TimeoutError is a wait that gave up: Last is what its condition said the last time.
type TimeoutError struct {
	Waited time.Duration
	Tries  int
	Last   error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("gave up waiting after %v (%d tries): %v", e.Waited, e.Tries, e.Last)
}

func (e *TimeoutError) Unwrap() error { return e.Last }
