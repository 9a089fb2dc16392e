package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// suspended is the error a pass's host call returns after it has durably suspended the run:
// the guest is unwound and the run waits for wakeAt (zero: only an event wakes it).
type suspended struct {
	step   string // the journal key the run waits at
	reason string
	wakeAt time.Time
	// event is set for a wait: an event may resume it at any time, whatever its timeout.
	event bool
	// paused is set for a run held paused (pause.go): nothing but a resume wakes it, and its
	// pass is never parked.
	paused bool
}

func (s *suspended) Error() string { return "run suspended: " + s.reason }

// runFailure ends the pass and fails the run (or marks it nondeterministic) with info.
type runFailure struct {
	status store.RunStatus
	info   abi.ErrorInfo
}

func (f *runFailure) Error() string { return f.info.Error() }

func nondeterministic(format string, args ...any) *runFailure {
	return &runFailure{status: store.StatusNondeterministic, info: abi.ErrorInfo{
		Code: abi.CodeNondeterministic, Message: fmt.Sprintf(format, args...),
	}}
}

// pass implements host.Handler for one activation: it replays the journal it was claimed with
// and hands each new durable boundary to its journal, which commits it no later than the
// guest's next one. What an operator sees of it goes to its observer. Only the activation's
// goroutine uses it.
type pass struct {
	run   store.Run
	j     *journal
	obs   *activationObs
	retry abi.RetryPolicy // the workflow's default step policy
	// maxSteps is the tenant's bound on the journal's length.
	maxSteps int

	seen  map[string]int // name -> times reached in this pass, for key suffixes
	clock time.Time      // the guest's clock outside callbacks: latest journal time reached

	inStep *openStep // the step whose callback is running, if any
	// lastKey is the key of the latest journal entry reached, which a snapshot taken at the
	// next call records (snapshots.go); snaps is the pass's snapshot policy, nil: none.
	lastKey string
	snaps   *passSnapshots

	// park keeps the pass parked when a call suspends the run, until the run may go on
	// (parking.go); nil: never. act is the activation the pass runs as.
	park func(ctx context.Context, p *pass, seq int, susp *suspended) (*store.Claim, bool)
	act  *activation

	clk  clock.Clock  // the engine's, for the times the pass writes
	rand clock.Rand   // the retry jitter
	log  *slog.Logger // carries the run's tenant, workflow and run
	// caps serves the step callbacks' secrets and outbound audit (capabilities.go).
	caps capabilities

	// handlesCancel: the module declares abi.FeatureCancel, so a cancel reaches the workflow
	// (cancel.go); cancelSeen: it has, in this pass or (replayed) an earlier one.
	handlesCancel bool
	cancelSeen    bool
}

type openStep struct {
	key       string
	seq       int
	attempt   int
	policy    abi.RetryPolicy
	startedAt time.Time
}

var _ host.Handler = (*pass)(nil)

// now is the engine's clock for values it writes. Postgres keeps microseconds, so every time
// the guest can observe is truncated to them: a replay reads back exactly what the first pass saw.
func (p *pass) now() time.Time { return p.clk.Now().UTC().Truncate(time.Microsecond) }

// Now is the guest's deterministic clock.
func (p *pass) Now() time.Time { return p.clock }

// CurrentStep is the key of the step whose callback is running.
func (p *pass) CurrentStep() string {
	if p.inStep == nil {
		return ""
	}
	return p.inStep.key
}

func (p *pass) advance(t *time.Time) {
	if t != nil && t.After(p.clock) {
		p.clock = *t
	}
}

// parkable makes a durable call that may suspend the run. When it does and the pass is kept
// parked until the run may go on (parking.go), the call is made again on the journal as the
// resume read it, from the entry it suspended at: what a replay reaching that entry would do,
// so a parked pass and a replayed one go on alike.
func (p *pass) parkable(ctx context.Context, name string, call func() (host.Reply, error)) (host.Reply, error) {
	for {
		seq, reached := p.j.cursor, p.seen[name]
		r, err := call()
		var susp *suspended
		if p.park == nil || !errors.As(err, &susp) || susp.paused {
			return r, err
		}
		c, ok := p.park(ctx, p, seq, susp)
		if !ok {
			return r, err
		}
		p.run = c.Run
		p.j.resume(c, seq)
		p.seen[name] = reached
	}
}

// next returns the key the guest's step name gets in this pass, and the journal entry at the
// cursor if the journal has one, checking it is the same step.
func (p *pass) next(ctx context.Context, name string, kind store.StepKind) (key string, seq int, entry *store.Step, err error) {
	if p.pastDeadline() {
		return "", 0, nil, &runFailure{status: store.StatusFailed, info: abi.ErrorInfo{
			Code: abi.CodeRunTimeout, Message: "the run ran past its deadline",
		}}
	}
	if p.cancelRequested() && p.pastGrace() {
		return "", 0, nil, graceOver()
	}
	key = stepKey(p.seen, name)
	if err := p.holdIfAsked(ctx, key); err != nil {
		return "", 0, nil, err
	}
	seq, s, err := p.j.reach(ctx)
	if err != nil {
		return "", 0, nil, err
	}
	p.lastKey = key
	if s != nil {
		if d := checkReached(seq, s, key, kind); d != nil {
			return "", 0, nil, d.failure()
		}
		return key, seq, s, nil
	}
	if seq >= p.maxSteps {
		return "", 0, nil, &runFailure{status: store.StatusFailed, info: abi.ErrorInfo{
			Code: abi.CodeStepLimit, Message: fmt.Sprintf("the run reached its tenant's limit of %d steps", p.maxSteps),
		}}
	}
	return key, seq, nil, nil
}

// pastDeadline reports whether the run has reached its deadline (a workflow deadline: it is
// failed at its next durable call).
func (p *pass) pastDeadline() bool {
	return p.run.Deadline != nil && !p.now().Before(*p.run.Deadline)
}

// byDeadline is the time a run suspended until t (nil: until an event) is to be woken: t, or
// the run's deadline when that comes first, so that a sleeping or waiting run is woken to
// be failed at it.
func (p *pass) byDeadline(t *time.Time) *time.Time {
	if d := p.run.Deadline; d != nil && (t == nil || d.Before(*t)) {
		t = d
	}
	// A cancelled run is woken at the end of its grace period, to be terminated then.
	if g := p.run.CancelGraceUntil; g != nil && (t == nil || g.Before(*t)) {
		t = g
	}
	return t
}

// suspend releases the run until wakeAt (nil: until an event), journaling s first if given;
// no later than the run's deadline.
func (p *pass) suspend(ctx context.Context, key, reason string, s *store.Step, wakeAt *time.Time) error {
	wakeAt = p.byDeadline(wakeAt)
	if err := p.j.suspend(ctx, s, wakeAt); err != nil {
		return err
	}
	out := &suspended{step: key, reason: reason}
	if wakeAt != nil {
		out.wakeAt = *wakeAt
	}
	return out
}

func (p *pass) StepRun(ctx context.Context, name string, opts abi.StepOptions) (host.Reply, error) {
	return p.parkable(ctx, name, func() (host.Reply, error) { return p.stepRun(ctx, name, opts) })
}

func (p *pass) stepRun(ctx context.Context, name string, opts abi.StepOptions) (host.Reply, error) {
	if err := p.j.flush(ctx); err != nil {
		return host.Reply{}, err
	}
	key, seq, s, err := p.next(ctx, name, store.KindRun)
	if err != nil {
		return host.Reply{}, err
	}
	// The host decoded and validated opts (abi.DecodeStepOptions) before calling.
	policy := p.retry
	if opts.Retry != nil {
		policy = opts.Retry.Merge(p.retry)
	}
	if s != nil && s.Status == store.StepCancelled {
		return p.replayCancelled(s), nil
	}
	if (s == nil || s.Status == store.StepRetrying) && p.cancelPending() {
		return p.deliverCancel(ctx, key, seq, store.KindRun, s)
	}
	attempt := 1
	if s != nil {
		switch s.Status {
		case store.StepCompleted:
			p.advance(s.CompletedAt)
			return host.Reply{Status: abi.StatusOK, Data: s.Output}, nil
		case store.StepFailed:
			p.advance(s.CompletedAt)
			return host.Reply{Status: abi.StatusStepFailed, Data: errorJSON(s.Error)}, nil
		case store.StepRetrying:
			if s.WakeAt != nil && p.now().Before(*s.WakeAt) {
				return host.Reply{}, p.suspend(ctx, key, "retry backoff of "+key, nil, s.WakeAt)
			}
			if s.WakeAt != nil {
				p.obs.timerDue("retry", *s.WakeAt, p.now())
			}
			attempt = s.Attempt + 1
		default:
			return host.Reply{}, nondeterministic("step %q: journal status %s is not one a run step can have", key, s.Status)
		}
	}
	started := p.now()
	p.inStep = &openStep{key: key, seq: seq, attempt: attempt, policy: policy, startedAt: started}
	p.obs.stepStarted(ctx, key, attempt, started)
	return host.Reply{Status: abi.StatusExecute, Data: abi.StepAttempt{Attempt: attempt}.JSON()}, nil
}

func (p *pass) StepDone(ctx context.Context, outcome abi.Outcome, data []byte) (host.Reply, error) {
	if outcome != abi.OutcomeOK {
		return p.attemptFailed(ctx, abi.DecodeErrorInfo(data)) // the host's own encoding of what it decoded: the same value
	}
	_, row, done, err := p.closeStep()
	if err != nil {
		return host.Reply{}, err
	}
	row.Status, row.Output, row.CompletedAt = store.StepCompleted, json.RawMessage(data), &done
	p.j.hold(row)
	p.obs.stepDone(nil, time.Time{})
	p.advance(&done)
	return host.Reply{Status: abi.StatusOK}, nil
}

// closeStep ends the running step's callback: it returns the step, its journal row as far as
// every outcome fills it in, and the time the callback ended.
func (p *pass) closeStep() (*openStep, store.Step, time.Time, error) {
	st := p.inStep
	p.inStep = nil
	if st == nil {
		return nil, store.Step{}, time.Time{}, &runFailure{status: store.StatusFailed, info: abi.ErrorInfo{Code: abi.CodeABIViolation, Message: "a step ended with no running step"}}
	}
	return st, store.Step{RunID: p.run.ID, Seq: st.seq, Key: st.key, Kind: store.KindRun, Attempt: st.attempt, StartedAt: st.startedAt}, p.now(), nil
}

// attemptFailed journals the running step's attempt as failed with info: retried by the step's
// policy after its backoff (the run suspends, and the call never returns), or, with no attempt
// left or a non-retryable error, the step's final failure, returned as STEP_FAILED.
func (p *pass) attemptFailed(ctx context.Context, info abi.ErrorInfo) (host.Reply, error) {
	st, row, done, err := p.closeStep()
	if err != nil {
		return host.Reply{}, err
	}
	row.Error = &info
	if p.cancelPending() {
		return p.attemptCancelled(st, row, done, info), nil
	}
	if !info.NonRetryable && st.attempt < st.policy.Attempts {
		wake := done.Add(st.policy.Delay(st.attempt, p.rand.Float64())).Truncate(time.Microsecond)
		row.Status, row.WakeAt = store.StepRetrying, &wake
		p.obs.stepDone(&info, wake)
		p.log.Info("step attempt failed; retrying", "step", st.key, "attempt", st.attempt, "code", info.Code, "error", info.Message, "retry_at", wake)
		return host.Reply{}, p.suspend(ctx, st.key, fmt.Sprintf("step %q attempt %d failed", st.key, st.attempt), &row, &wake)
	}
	row.Status, row.CompletedAt = store.StepFailed, &done
	if !info.NonRetryable && st.policy.OnExhausted == abi.ExhaustedPause {
		return host.Reply{}, p.exhaustedPause(ctx, st, row)
	}
	p.j.hold(row)
	p.obs.stepDone(&info, time.Time{})
	p.log.Info("step failed", "step", st.key, "attempt", st.attempt, "code", info.Code, "error", info.Message)
	p.advance(&done)
	return host.Reply{Status: abi.StatusStepFailed, Data: errorJSON(&info)}, nil
}

// StepInterrupted journals the attempt the host stopped (its timeout, or the activation's
// wall time) as a failed attempt with info, retried by the step's policy. See host.Handler.
func (p *pass) StepInterrupted(ctx context.Context, info abi.ErrorInfo) error {
	var key string
	if p.inStep != nil {
		key = p.inStep.key
	}
	r, err := p.attemptFailed(ctx, info)
	if err != nil {
		return err // suspended until the retry's backoff, no running step, or the store's error
	}
	if r.Status != abi.StatusStepFailed {
		return fmt.Errorf("engine: a timed-out attempt of step %q was answered %d", key, r.Status)
	}
	// No attempt left: the failure is held for commit, and the guest that would have been
	// told cannot go on. The run goes on at once in a new pass, which replays it the failure.
	now := p.now()
	return p.suspend(ctx, key, fmt.Sprintf("step %q timed out on its last attempt", key), nil, &now)
}

func (p *pass) Sleep(ctx context.Context, name string, d time.Duration) (host.Reply, error) {
	return p.parkable(ctx, name, func() (host.Reply, error) {
		return p.sleep(ctx, name, func(t time.Time) time.Time { return t.Add(d) })
	})
}

func (p *pass) SleepUntil(ctx context.Context, name string, until time.Time) (host.Reply, error) {
	return p.parkable(ctx, name, func() (host.Reply, error) {
		return p.sleep(ctx, name, func(time.Time) time.Time { return until })
	})
}

// sleep journals the wake-up time the first time the step is reached (until computes it from
// the current time) and suspends until it has passed.
func (p *pass) sleep(ctx context.Context, name string, until func(time.Time) time.Time) (host.Reply, error) {
	key, seq, s, err := p.next(ctx, name, store.KindSleep)
	if err != nil {
		return host.Reply{}, err
	}
	t := p.now()
	if s != nil && s.Status == store.StepCancelled {
		return p.replayCancelled(s), nil
	}
	if (s == nil || s.Status == store.StepSleeping) && p.cancelPending() {
		return p.deliverCancel(ctx, key, seq, store.KindSleep, s)
	}
	if s == nil {
		return p.newSleep(ctx, key, seq, t, until(t).UTC().Truncate(time.Microsecond))
	}
	if err := p.j.flush(ctx); err != nil {
		return host.Reply{}, err
	}
	switch {
	case s.Status == store.StepCompleted:
		p.advance(s.CompletedAt)
		return host.Reply{Status: abi.StatusOK}, nil
	case s.Status != store.StepSleeping || s.WakeAt == nil:
		return host.Reply{}, nondeterministic("sleep %q: journal status %s is not one a sleep can have", key, s.Status)
	case t.Before(*s.WakeAt):
		return host.Reply{}, p.suspend(ctx, key, "sleep "+key, nil, s.WakeAt)
	}
	p.obs.timerDue("sleep", *s.WakeAt, t)
	// Mark it elapsed so the journal reads as it happened and replays need no clock.
	row := *s
	row.Status, row.CompletedAt = store.StepCompleted, s.WakeAt
	if err := p.j.commit(ctx, row); err != nil {
		return host.Reply{}, err
	}
	p.advance(s.WakeAt)
	return host.Reply{Status: abi.StatusOK}, nil
}

// newSleep journals a sleep reached for the first time (at t, until wake). One that suspends
// the run commits the held-back step in the suspension's transaction (journal.suspend); one
// already over (zero or negative) commits it first, as every durable call does, and is
// journaled elapsed. Neither writes anything before.
func (p *pass) newSleep(ctx context.Context, key string, seq int, t, wake time.Time) (host.Reply, error) {
	defer p.obs.sleepReached(ctx, key, t, wake)()
	row := store.Step{RunID: p.run.ID, Seq: seq, Key: key, Kind: store.KindSleep, Status: store.StepSleeping, StartedAt: t, WakeAt: &wake}
	if wake.After(t) {
		return host.Reply{}, p.suspend(ctx, key, "sleep "+key, &row, &wake)
	}
	if err := p.j.flush(ctx); err != nil {
		return host.Reply{}, err
	}
	row.Status, row.CompletedAt = store.StepCompleted, &t
	if err := p.j.commit(ctx, row); err != nil {
		return host.Reply{}, err
	}
	p.advance(&t)
	return host.Reply{Status: abi.StatusOK}, nil
}

func (p *pass) WaitEvent(ctx context.Context, name string, opts abi.WaitOptions) (host.Reply, error) {
	return p.parkable(ctx, name, func() (host.Reply, error) { return p.waitEvent(ctx, name, opts) })
}

func (p *pass) waitEvent(ctx context.Context, name string, opts abi.WaitOptions) (host.Reply, error) {
	if err := p.j.flush(ctx); err != nil {
		return host.Reply{}, err
	}
	key, seq, s, err := p.next(ctx, name, store.KindWait)
	if err != nil {
		return host.Reply{}, err
	}
	t := p.now()
	// A completed wait that ends the claimed journal was resolved while the run was suspended:
	// this pass is the first to see it (a crash before the next commit would count it again).
	if s != nil && s.Status == store.StepCompleted && p.j.last(seq) {
		p.obs.signalled(s.Event)
	}
	if s != nil && s.Status == store.StepCancelled {
		if d := checkWaitEvent(seq, s, opts.Event); d != nil {
			return host.Reply{}, d.failure()
		}
		return p.replayCancelled(s), nil
	}
	if s == nil && p.cancelPending() {
		return p.deliverCancel(ctx, key, seq, store.KindWait, &store.Step{
			RunID: p.run.ID, Seq: seq, Key: key, Kind: store.KindWait, Event: opts.Event, Match: opts.Match, StartedAt: t,
		})
	}
	if s == nil {
		defer p.obs.waitReached(ctx, key, opts.Event, t)()
		row := store.Step{
			RunID: p.run.ID, Seq: seq, Key: key, Kind: store.KindWait, Status: store.StepWaiting,
			Event: opts.Event, Match: opts.Match, StartedAt: t,
		}
		if opts.TimeoutMs > 0 {
			timeout := t.Add(time.Duration(opts.TimeoutMs) * time.Millisecond)
			row.WakeAt = &timeout
		}
		// The store wakes a waiting run at its wait's timeout: with a deadline sooner, the wait
		// is journaled to time out at it, where the run is failed before the wait is replayed.
		row.WakeAt = p.byDeadline(row.WakeAt)
		resolved, err := p.j.reachWait(ctx, row)
		if err != nil {
			return host.Reply{}, err
		}
		if resolved == nil {
			return host.Reply{}, waitSuspended(key, opts.Event, row.WakeAt)
		}
		if resolved.Status == store.StepCompleted {
			p.obs.signalled(opts.Event)
		}
		s = resolved
	}
	if d := checkWaitEvent(seq, s, opts.Event); d != nil {
		return host.Reply{}, d.failure()
	}
	if s.Status == store.StepWaiting && p.cancelPending() {
		r, resolved, err := p.cancelWait(ctx, key)
		if err != nil || resolved == nil {
			return r, err
		}
		s = resolved
	}
	if s.Status == store.StepWaiting && (s.WakeAt == nil || t.Before(*s.WakeAt)) {
		// The journal was read at claim time; an event may have resolved the wait since.
		wake := p.byDeadline(s.WakeAt)
		row, err := p.j.parkWait(ctx, key, wake)
		if err != nil {
			return host.Reply{}, err
		}
		if row == nil {
			return host.Reply{}, waitSuspended(key, opts.Event, wake)
		}
		if row.Status == store.StepCompleted {
			p.obs.signalled(opts.Event)
		}
		s = row
	}
	if s.Status == store.StepWaiting {
		row, err := p.j.timeoutWait(ctx, key, *s.WakeAt)
		if err != nil {
			return host.Reply{}, err
		}
		if row.Status == store.StepCompleted {
			p.obs.signalled(opts.Event) // an event beat the timeout
		} else {
			p.obs.timerDue("wait_timeout", *s.WakeAt, t)
		}
		s = &row
	}
	switch s.Status {
	case store.StepCompleted:
		p.advance(s.CompletedAt)
		return host.Reply{Status: abi.StatusOK, Data: s.Output}, nil
	case store.StepTimedOut:
		p.advance(s.CompletedAt)
		return host.Reply{Status: abi.StatusTimeout}, nil
	}
	return host.Reply{}, nondeterministic("wait %q: journal status %s is not one a wait can have", key, s.Status)
}

// waitSuspended is the suspension of a pass at a wait the store has already parked.
func waitSuspended(key, event string, timeout *time.Time) *suspended {
	out := &suspended{step: key, reason: "wait " + key + " for event " + event, event: true}
	if timeout != nil {
		out.wakeAt = *timeout
	}
	return out
}

func errorJSON(info *abi.ErrorInfo) []byte {
	if info == nil {
		info = &abi.ErrorInfo{Code: abi.CodeWorkflowError, Message: "unknown error"}
	}
	b, _ := json.Marshal(info)
	return b
}
