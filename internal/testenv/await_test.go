package testenv_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/internal/testenv"
)

func TestAwaitReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	tries := 0
	testenv.Await(t, time.Minute, func() error {
		tries++
		if tries < 4 {
			return fmt.Errorf("try %d", tries)
		}
		return nil
	})
	if tries != 4 {
		t.Fatalf("the condition was called %d times, want 4: Await returns at the first nil", tries)
	}
}

// TestPollSaysWhatItWaitedFor: a wait that gives up says how long it tried and what its
// condition last said, and Await fails the test with that.
func TestPollSaysWhatItWaitedFor(t *testing.T) {
	t.Parallel()
	tries := 0
	err := testenv.Poll(t, 30*time.Millisecond, func() error {
		tries++
		return fmt.Errorf("run r1 is running after %d looks", tries)
	})
	var timeout *testenv.TimeoutError
	if !errors.As(err, &timeout) || timeout.Tries != tries || timeout.Waited < 30*time.Millisecond {
		t.Fatalf("Poll = %v after %d tries, want a TimeoutError counting them", err, tries)
	}
	if want := fmt.Sprintf("run r1 is running after %d looks", tries); !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "gave up waiting after") {
		t.Fatalf("the failure %q does not report the last condition %q", err, want)
	}

	failing := &recorder{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != errFatal {
				panic(r)
			}
		}()
		testenv.Await(failing, 10*time.Millisecond, func() error { return errors.New("never") })
	}()
	if !strings.Contains(failing.failure, "never") {
		t.Fatalf("Await failed the test with %q, want the condition's last word", failing.failure)
	}
}

// recorder is a testing.TB whose Fatal is recorded and stops the caller as the real one does.
type recorder struct {
	testing.TB
	failure string
}

var errFatal = errors.New("fatal")

func (r *recorder) Helper() {}

func (r *recorder) Fatal(args ...any) {
	r.failure = fmt.Sprint(args...)
	panic(errFatal)
}
