package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// Child workflows (child_run, ABI.md §4.16). A child is started by a durable step of kind
// child: the store creates the child run in the transaction that journals the step, fenced by
// the parent's lease (store.Store.StartChild), so a child is started exactly once whatever
// crashes; its id, the child's idempotency key, is the one the workflow gave or
// "<parent run id>:<step key>". An awaited child's step waits as wait_event's does, the parent
// holding no instance (or parked); the store resolves it in the transaction that ends the
// child's chain and wakes the parent. A detached child's step completes at once with its id.
//
// Cancellation: the parent's cancel is passed to its awaited child (parentClose cancel) when
// it reaches the parent at the child's step, after the step has journaled the cancellation,
// so the step always answers the cancellation (never a child_failed that the child's own
// cancel would race in first). A terminate of the parent reaches every child whose policy is
// cancel at once (closeChildren). abandon leaves the children running.

var _ host.ChildRunner = (*pass)(nil)

// RunChild serves child_run (host.ChildRunner).
func (p *pass) RunChild(ctx context.Context, name string, req abi.ChildRun) (host.Reply, error) {
	return p.parkable(ctx, name, func() (host.Reply, error) { return p.runChild(ctx, name, req) })
}

func (p *pass) runChild(ctx context.Context, name string, req abi.ChildRun) (host.Reply, error) {
	key, seq, s, err := p.next(ctx, name, store.KindChild)
	if err != nil {
		return host.Reply{}, err
	}
	if s != nil && s.Status == store.StepCancelled {
		return p.replayCancelled(s), nil
	}
	if s == nil && p.cancelPending() {
		// The cancellation reaches the workflow here: the child is not started.
		return p.deliverCancel(ctx, key, seq, store.KindChild, nil)
	}
	if s == nil {
		row, err := p.startChild(ctx, key, seq, req)
		if err != nil || row == nil {
			return host.Reply{}, err
		}
		s = row
	}
	if s.Status == store.StepWaiting && p.cancelPending() {
		r, resolved, err := p.cancelWait(ctx, key)
		if err != nil {
			return host.Reply{}, err
		}
		if resolved == nil {
			p.cancelChildren(ctx, key)
			return r, nil
		}
		s = resolved // the child ended first: its end is answered, the cancel reaches the next call
	}
	if s.Status == store.StepWaiting {
		// The journal was read at claim time; the child may have ended since.
		wake := p.byDeadline(nil)
		row, err := p.j.parkWait(ctx, key, wake)
		if err != nil {
			return host.Reply{}, err
		}
		if row == nil {
			return host.Reply{}, childSuspended(key, wake)
		}
		s = row
	}
	switch s.Status {
	case store.StepCompleted:
		p.advance(s.CompletedAt)
		return host.Reply{Status: abi.StatusOK, Data: s.Output}, nil
	case store.StepFailed:
		p.advance(s.CompletedAt)
		return host.Reply{Status: abi.StatusStepFailed, Data: errorJSON(s.Error)}, nil
	}
	return host.Reply{}, nondeterministic("child %q: journal status %s is not one a child step can have", key, s.Status)
}

// startChild starts the child req names as step key (seq), reached for the first time: the
// store creates it and journals the step in one transaction. It returns the step as journaled,
// or nil with the suspension of the parent when the step waits for an awaited child.
func (p *pass) startChild(ctx context.Context, key string, seq int, req abi.ChildRun) (*store.Step, error) {
	x := p.caps.exec
	t := p.now()
	row := store.Step{RunID: p.run.ID, Seq: seq, Key: key, Kind: store.KindChild, StartedAt: t}
	limits, err := x.limits.get(ctx, p.run.TenantID)
	if err != nil {
		return nil, fmt.Errorf("start child %q: read the tenant's limits: %w", key, err)
	}
	if len(req.Input) > limits.MaxInputBytes {
		return nil, &runFailure{status: store.StatusFailed, info: abi.ErrorInfo{
			Code:    abi.CodePayloadTooLarge,
			Message: fmt.Sprintf("child_run %q: the child's input is %d bytes, the tenant's input limit is %d", key, len(req.Input), limits.MaxInputBytes),
		}}
	}
	// Same tenant only: the workflow is resolved among the parent's tenant's.
	wf, err := x.cfg.Store.ResolveWorkflow(ctx, p.run.TenantID, req.Workflow, req.Version)
	if errors.Is(err, store.ErrNotFound) {
		if err := p.j.flush(ctx); err != nil {
			return nil, err
		}
		info := abi.ErrorInfo{Code: abi.CodeChildRefused, Message: fmt.Sprintf("no workflow %q (version %q) in the run's tenant", req.Workflow, req.Version), NonRetryable: true}
		row.Status, row.Error, row.CompletedAt = store.StepFailed, &info, &t
		if err := p.j.commit(ctx, row); err != nil {
			return nil, err
		}
		p.log.Info("child refused", "step", key, "workflow", req.Workflow, "error", info.Message)
		return &row, nil
	}
	if err != nil {
		return nil, fmt.Errorf("start child %q: resolve workflow %s: %w", key, req.Workflow, err)
	}
	id := req.ID
	if id == "" {
		id = p.run.ID + ":" + key
	}
	child := store.NewRun{
		TenantID: p.run.TenantID, Workflow: wf.Name, Version: wf.Version, Digest: wf.Digest, Input: req.Input,
		IdempotencyKey: id, RetentionDays: store.RetentionDays(0, wf.RetentionDays, x.cfg.DefaultRetentionDays, x.cfg.MaxRetentionDays),
	}
	if req.TimeoutMs > 0 {
		d := t.Add(time.Duration(req.TimeoutMs) * time.Millisecond)
		child.Deadline = &d
	}
	awaited := !req.Detach
	if awaited {
		row.WakeAt = p.byDeadline(nil)
	}
	link := store.ChildLink{ParentRunID: p.run.ID, ParentKey: key, ParentClose: req.ParentClose, Awaited: awaited}
	traced := p.obs.childReached(ctx, key, wf.Name, t)
	out, childID, err := p.j.startChild(ctx, row, child, link)
	traced(childID)
	if err != nil {
		return nil, err
	}
	// The child is pending: this host's claimer takes it as it takes a queued start (the
	// hosts' notice of it is not for the host that sent it).
	x.backlog.Store(true)
	x.wake()
	p.log.Info("child started", "step", key, "child_workflow", wf.Name, "child_id", id, "detached", !awaited, "status", out.Status)
	if out.Status == store.StepWaiting {
		return nil, childSuspended(key, row.WakeAt)
	}
	return &out, nil
}

// childSuspended is the suspension of a parent at an awaited child's step: its end may wake
// it at any time, as an event wakes a wait.
func childSuspended(key string, wake *time.Time) *suspended {
	out := &suspended{step: key, reason: "child " + key, event: true}
	if wake != nil {
		out.wakeAt = *wake
	}
	return out
}

// cancelChildren passes the parent's cancellation to the live children of its step key whose
// policy is cancel, with what is left of the parent's grace.
func (p *pass) cancelChildren(ctx context.Context, key string) {
	p.stopLinked(ctx, "child", p.cancelGrace(), false, func(c store.ChildRef) bool {
		return c.Link.ParentKey == key && c.Link.ParentClose == abi.ParentCloseCancel
	})
}

// stopLinked cancels the live runs linked to this one (children and branches) that match
// picks, with grace: the one walk both a parent's cancellation and a decided join take.
// With terminatePending, a run that never ran is terminated instead, since no code of it could
// see a cancel. Every pass that answers a step asks again, so a run the store cannot reach
// now is only logged: a crash or an outage between the decision and the cancel loses nothing.
// Each run is closed as every linked run is (Service.closeChild).
func (p *pass) stopLinked(ctx context.Context, what string, grace time.Duration, terminatePending bool, picks func(store.ChildRef) bool) {
	x := p.caps.exec
	kids, err := x.cfg.Store.ChildrenOf(ctx, p.run.TenantID, p.run.ID)
	if err != nil {
		p.log.Warn("list the runs to cancel", "of", what, "err", err)
		return
	}
	for _, c := range kids {
		if c.Status.Terminal() || !picks(c) {
			continue
		}
		x.service().closeChild(ctx, p.run.TenantID, p.run.ID, c.RunID, 0, terminatePending && c.Status == store.StatusPending, grace)
	}
}

// closeChildren terminates the live children of runID whose policy is cancel, and theirs in
// turn: a terminated parent's children do not outlive it.
func (s *Service) closeChildren(ctx context.Context, tenantID, runID string, depth int) {
	s.closeLinked(ctx, tenantID, runID, depth, true)
}

// closeAtEnd cancels the live children of runID whose policy is cancel, and its branches, once
// the run has ended on its own (completed, failed, past its deadline, continued as new): no code
// of the parent is left to await them, so an awaited child cut short by its parent's deadline,
// or a detached child started with parentClose cancel, does not outlive it. They get the
// default grace, as a client's cancel would give them; a child whose module does not declare
// cancel is terminated (CancelRun). Each child's own end closes its children in turn.
//
// It runs after the end commits, as a terminate's closeChildren does: a host that dies between
// the two leaves the children running until a sweep closes them (sweeper.closeOrphans, ABI.md
// §4.16), cancelled with the default grace even where a terminate would have terminated them.
func (s *Service) closeAtEnd(ctx context.Context, tenantID, runID string) {
	s.closeLinked(context.WithoutCancel(ctx), tenantID, runID, 0, false)
}

// closeLinked is closeChildren's and closeAtEnd's walk: terminate, following the children's
// children (whose code will not run to close them), or cancel with the default grace.
func (s *Service) closeLinked(ctx context.Context, tenantID, runID string, depth int, terminate bool) {
	if depth > maxChildDepth {
		return
	}
	kids, err := s.cfg.Store.ChildrenOf(ctx, tenantID, runID)
	if err != nil {
		s.cfg.Logger.Warn("close a run's children", "run", runID, "err", err)
		return
	}
	for _, c := range kids {
		if c.Link.ParentClose != abi.ParentCloseCancel || c.Status.Terminal() {
			continue
		}
		s.closeChild(ctx, tenantID, runID, c.RunID, depth, terminate, DefaultCancelGrace)
	}
}

// closeChild closes one run linked to runID (a child or a branch): terminated, and its
// children in turn, or cancelled with grace (terminated when its module cannot see a cancel).
// It is the one close of a linked run: a parent's end, a terminate, the sweep, a parent's
// cancellation and a decided join all take it. It says whether the run is closed (or ended
// meanwhile, which is no error); a failure is logged.
func (s *Service) closeChild(ctx context.Context, tenantID, runID, childID string, depth int, terminate bool, grace time.Duration) bool {
	var child store.Run
	var err error
	if terminate {
		child, err = s.terminate(ctx, tenantID, childID, depth+1)
	} else {
		child, err = s.CancelRun(ctx, tenantID, childID, grace)
	}
	switch {
	case errors.Is(err, store.ErrConflict):
		// It ended meanwhile.
	case err != nil:
		s.cfg.Logger.Warn("close a child of a closed run", "run", runID, "child", childID, "terminate", terminate, "err", err)
		return false
	default:
		s.cfg.Logger.Info("child of a closed run closed", "run", runID, "child", childID, "terminate", terminate, "status", child.Status)
	}
	return true
}

// maxChildDepth bounds how deep a terminate follows children, so that no chain of links can
// hold a terminate in a loop.
const maxChildDepth = 64

// service is the engine's Service, through which a pass cancels and terminates children as
// a client's cancel would (the scheduler holds it for the same reason: New sets both).
func (x *Executor) service() *Service { return x.scheduler.svc }
