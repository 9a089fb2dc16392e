package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wfhost/wfhost/abi"
)

// Attempt timeouts (ABI.md §4.4). A step attempt with a timeoutMs is bounded by a timer armed
// when step_run answers EXECUTE; when it fires before step_done, the guest is stopped by
// cancelling the context of the calls into it (wazero aborts the guest where it is, and an
// outbound request in flight is cancelled), and the Handler journals the attempt as failed with
// code timeout. A callback still running when the activation's wall time runs out is treated
// the same way: the attempt is to blame, not the whole run.

// errStepTimeout is the cause of the guest's context when an attempt's timeout stopped it.
var errStepTimeout = errors.New("step attempt timed out")

// attemptTimer bounds one step attempt's callback. It fires on a goroutine of its own, so
// what it shares with the guest's goroutine is behind mu.
type attemptTimer struct {
	limit time.Duration
	timer *time.Timer

	mu    sync.Mutex
	fired bool
}

// startAttempt arms the attempt's timeout, if it has one.
func (st *state) startAttempt(limit time.Duration) {
	if limit <= 0 || st.wall == nil {
		return
	}
	t := &attemptTimer{limit: limit}
	cancel := st.wall.cancel
	t.timer = time.AfterFunc(limit, func() {
		t.mu.Lock()
		t.fired = true
		t.mu.Unlock()
		cancel(errStepTimeout)
	})
	st.attempt = t
}

// endAttempt disarms the attempt's timeout as step_done ends its callback, and reports
// whether it fired first (the guest is then being stopped, and its result comes too late) and
// what the timeout was.
func (st *state) endAttempt() (limit time.Duration, timedOut bool) {
	t := st.attempt
	st.attempt = nil
	if t == nil {
		return 0, false
	}
	t.timer.Stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limit, t.fired
}

func timeoutMessage(limit time.Duration) string {
	return fmt.Sprintf("the step's attempt ran past its timeout of %v", limit)
}

// interruptedAttempt is why the guest's calls were cut short inside a step callback, if they
// were by the attempt's timeout or the activation's wall time: the message of the attempt's
// timeout error; "" otherwise.
func (st *state) interruptedAttempt(gctx context.Context) string {
	if !st.inStep {
		return ""
	}
	switch cause := context.Cause(gctx); {
	case errors.Is(cause, errStepTimeout) && st.attempt != nil:
		return timeoutMessage(st.attempt.limit)
	case errors.Is(cause, errWallTime):
		return fmt.Sprintf("the step's attempt ran past the activation's wall-time limit of %v", st.limits.WallTime)
	}
	return ""
}

// attemptTimedOut hands the timed-out attempt to the Handler, which journals it and returns
// the error the pass ends with (a suspension until the retry, or until the run goes on with
// the step's final failure). ctx must not be the guest's, which is cancelled by now.
func (st *state) attemptTimedOut(ctx context.Context, message string) error {
	st.inStep = false
	st.endAttempt()
	st.interrupted = true
	err := st.handler.StepInterrupted(ctx, abi.ErrorInfo{Code: abi.CodeTimeout, Message: message})
	if err == nil {
		return errors.New("host: the handler took a timed-out attempt without ending the pass")
	}
	return err
}
