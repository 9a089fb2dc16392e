package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// A cancel the workflow can handle (ABI.md §4.15). A cancel asks a live run to stop: the store
// records when, and until when the workflow may compensate (store.Store.RequestCancel), and
// tells every host. The workflow sees it at its next durable call (or at the one it is parked
// in): a step it would run fails with code cancelled instead, a sleep or a wait ends early
// with StatusCancelled, and an HTTP request of a running step callback is aborted. Where it
// saw it is journaled (store.StepCancelled), so every replay sees it at the same call; the
// calls after it run as usual, so the workflow can run compensation steps. Past the grace
// period the run is terminated, wherever it is. A module that does not declare
// abi.FeatureCancel is terminated at once, as before this existed.

// DefaultCancelGrace is how long a cancelled run may compensate when the caller names no grace.
const DefaultCancelGrace = time.Minute

// MaxCancelGrace bounds a cancel's grace period.
const MaxCancelGrace = 24 * time.Hour

// cancelledInfo is the error a workflow sees at the call its cancellation reached.
func cancelledInfo() abi.ErrorInfo {
	return abi.ErrorInfo{Code: abi.CodeCancelled, Message: "the run was cancelled", NonRetryable: true}
}

// cancelSignal is how an activation hears of a cancel asked while it runs: ch is closed once,
// after requestedAt and graceUntil are set (the close publishes them to the pass).
type cancelSignal struct {
	once                    sync.Once
	ch                      chan struct{}
	requestedAt, graceUntil time.Time
}

func newCancelSignal() *cancelSignal { return &cancelSignal{ch: make(chan struct{})} }

// raise tells the activation that a cancel was asked at requestedAt, with grace until graceUntil.
func (c *cancelSignal) raise(requestedAt, graceUntil time.Time) {
	c.once.Do(func() {
		c.requestedAt, c.graceUntil = requestedAt, graceUntil
		close(c.ch)
	})
}

func (c *cancelSignal) raised() bool {
	select {
	case <-c.ch:
		return true
	default:
		return false
	}
}

// cancelRequested reports whether a cancel was asked of the run: as it was claimed, or since,
// by a notice to this activation, which carries the cancel's times (Executor.cancelRequested).
func (p *pass) cancelRequested() bool {
	if p.run.CancelRequestedAt != nil {
		return true
	}
	ask := p.cancelAsk()
	if ask == nil || !ask.raised() {
		return false
	}
	p.run.CancelRequestedAt, p.run.CancelGraceUntil = &ask.requestedAt, &ask.graceUntil
	return true
}

// cancelAsk is the activation's cancel signal, nil when the pass has no activation.
func (p *pass) cancelAsk() *cancelSignal {
	if p.act == nil {
		return nil
	}
	return p.act.cancelAsk
}

// cancelPending reports whether the workflow is to see its cancellation at this call: it
// handles one, one was asked, and it has not seen it yet.
func (p *pass) cancelPending() bool {
	return p.handlesCancel && !p.cancelSeen && p.cancelRequested()
}

// pastGrace reports whether a cancelled run has used up its grace period.
func (p *pass) pastGrace() bool {
	return p.run.CancelGraceUntil != nil && !p.now().Before(*p.run.CancelGraceUntil)
}

// graceOver is the end of a cancelled run whose grace period has passed.
func graceOver() *runFailure {
	return &runFailure{status: store.StatusCancelled, info: abi.ErrorInfo{
		Code: abi.CodeCancelled, Message: "the run was cancelled and did not end within its grace period",
	}}
}

// cancelledReply is what a call the cancellation reached answers: a step's (or a child
// step's) failure, or
// StatusCancelled for a sleep or a wait.
func cancelledReply(kind store.StepKind, info *abi.ErrorInfo) host.Reply {
	if kind == store.KindRun || kind == store.KindChild || kind == store.KindParallel {
		return host.Reply{Status: abi.StatusStepFailed, Data: errorJSON(info)}
	}
	return host.Reply{Status: abi.StatusCancelled, Data: errorJSON(info)}
}

// replayCancelled answers a journal entry the cancellation reached in an earlier pass.
func (p *pass) replayCancelled(s *store.Step) host.Reply {
	p.cancelSeen = true
	p.advance(s.CompletedAt)
	return cancelledReply(s.Kind, s.Error)
}

// deliverCancel journals that the cancellation reached the workflow at the call key (seq),
// whose entry s is nil (a new call) or one still to end (a step to retry, a sleep not over),
// and answers it. A wait already journaled is ended through cancelWait instead, which an
// event may beat.
func (p *pass) deliverCancel(ctx context.Context, key string, seq int, kind store.StepKind, s *store.Step) (host.Reply, error) {
	if err := p.j.flush(ctx); err != nil {
		return host.Reply{}, err
	}
	now := p.now()
	info := cancelledInfo()
	row := store.Step{RunID: p.run.ID, Seq: seq, Key: key, Kind: kind, StartedAt: now}
	if s != nil {
		row = *s
	}
	row.Status, row.Error, row.CompletedAt = store.StepCancelled, &info, &now
	if err := p.j.commit(ctx, row); err != nil {
		return host.Reply{}, err
	}
	return p.cancelDelivered(key, &row), nil
}

// cancelWait ends the wait key as where the cancellation reached the workflow, unless an event
// resolved it first: then the wait goes on with it (the returned row), and the cancellation
// reaches the next call.
func (p *pass) cancelWait(ctx context.Context, key string) (host.Reply, *store.Step, error) {
	row, err := p.j.store.CancelWait(ctx, p.j.lease, key, p.now(), cancelledInfo(), p.j.leaseFor)
	if err != nil {
		return host.Reply{}, nil, err
	}
	if row.Status != store.StepCancelled {
		return host.Reply{}, &row, nil
	}
	return p.cancelDelivered(key, &row), nil, nil
}

// cancelDelivered records that the workflow was told of its cancellation at row.
func (p *pass) cancelDelivered(key string, row *store.Step) host.Reply {
	p.cancelSeen = true
	p.advance(row.CompletedAt)
	p.log.Info("run cancelled: the workflow was told", "step", key, "grace_until", p.run.CancelGraceUntil)
	return cancelledReply(row.Kind, row.Error)
}

// attemptCancelled ends a step whose callback failed while the run's cancellation was pending:
// not retried, journaled as where the cancellation reached the workflow.
func (p *pass) attemptCancelled(st *openStep, row store.Step, done time.Time, attemptErr abi.ErrorInfo) host.Reply {
	info := cancelledInfo()
	info.Message = fmt.Sprintf("the run was cancelled during attempt %d of the step: %s", st.attempt, attemptErr.Error())
	row.Status, row.Error, row.CompletedAt = store.StepCancelled, &info, &done
	p.j.hold(row)
	p.obs.stepDone(&info, time.Time{})
	p.cancelSeen = true
	p.advance(&done)
	return host.Reply{Status: abi.StatusStepFailed, Data: errorJSON(&info)}
}

// cancelRequested tells the activation of runID, if it is active here, that a cancel was asked
// of it, and terminates it at the end of its grace period if it still runs then. A parked pass
// hears of it when the run, made claimable by the request, is resumed.
//
// Every notice ends by waking the claimer: the pass it names may make no durable call again
// here (it has suspended, or parked, or ended, after the request and before this notice, or
// it does so while the run's cancel times are read below, so its own look for a pending
// cancel came before the raise), and then the run, which the store left claimable for its
// workflow to be told (store.Store.Suspend), waits for whatever wakes the claimer next. A pass
// that suspends or parks after the raise wakes it itself (activate, parkPass). Cancels are an
// operator's act: a claim round each costs nothing that counts.
func (x *Executor) cancelRequested(runID string) {
	defer x.wake()
	x.mu.Lock()
	a := x.active[runID]
	if a == nil {
		x.missed.record(runID, true, x.cfg.Clock.Now())
	}
	x.mu.Unlock()
	if a == nil {
		return
	}
	// The notice names the run only: its cancel's times are read once, here, for the pass and
	// the grace timer both. Unread (the store did not answer), the notice is still the store's
	// word that a cancel was asked; the pass is told of it with the longest grace, so that it is
	// never ended early, and the run's wake-up, clamped to the stored grace, ends it on time.
	r, err := x.cfg.Store.GetRun(context.Background(), a.tenant, runID)
	if err != nil || r.CancelRequestedAt == nil || r.CancelGraceUntil == nil {
		now := x.cfg.Clock.Now().UTC().Truncate(time.Microsecond)
		a.cancelAsk.raise(now, now.Add(MaxCancelGrace))
		return
	}
	a.cancelAsk.raise(*r.CancelRequestedAt, *r.CancelGraceUntil)
	x.terminateAtGrace(a, *r.CancelGraceUntil)
}

// terminateAtGrace terminates the run of a at until unless its activation ends first: a step
// callback that runs on past the grace period is not waited for.
func (x *Executor) terminateAtGrace(a *activation, until time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if a.grace != nil {
		return
	}
	a.grace = x.cfg.Clock.AfterFuncAt(until, func() {
		if _, err := x.cfg.Store.CancelRun(context.Background(), a.tenant, a.runID); err != nil {
			x.cfg.Logger.Info("terminate a cancelled run at the end of its grace period", "run", a.runID, "err", err)
			return
		}
		x.cfg.Logger.Info("cancelled run terminated at the end of its grace period", "tenant", a.tenant, "run", a.runID)
		x.cancelLocal(a.runID)
		x.service().closeChildren(context.Background(), a.tenant, a.runID, 0)
	})
}

// closedChannel is a cancel asked before the pass began.
var closedChannel = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// CancelAsked implements host.CancelWatcher: the outbound requests of a step callback are
// aborted by a cancel the workflow has not been told of yet, not by one it was told of (its
// compensation must reach out).
func (p *pass) CancelAsked() <-chan struct{} {
	switch {
	case !p.handlesCancel || p.cancelSeen:
		return nil
	case p.run.CancelRequestedAt != nil:
		return closedChannel
	case p.cancelAsk() != nil:
		return p.cancelAsk().ch
	}
	return nil
}
