package engine

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// Parallel branches (parallel_run, ABI.md §4.18), forked by replay: a branch is a run of its
// own, a child of the parent of the same workflow, module and input, whose journal starts as
// the parent's before the step. The store creates the branches and journals the parent's step
// in one transaction fenced by the parent's lease (store.Store.ForkBranches), so a branch is
// never started twice nor lost; a branch's pass replays the copied journal to the same call,
// where the journal's KindBranch entry answers it StatusBranch, and the guest runs the branch
// and ends it with branch_done (a complete or fail, to the engine). The store decides the join
// in the transaction that ends a branch and wakes the parent, which waits as at an awaited
// child, holding no instance (or parked). RATIONALE.md, "Parallel branches", says why.

var _ host.ParallelRunner = (*pass)(nil)

// RunParallel serves parallel_run (host.ParallelRunner).
func (p *pass) RunParallel(ctx context.Context, name string, req abi.Parallel) (host.Reply, error) {
	return p.parkable(ctx, name, func() (host.Reply, error) { return p.runParallel(ctx, name, req) })
}

func (p *pass) runParallel(ctx context.Context, name string, req abi.Parallel) (host.Reply, error) {
	key, seq, s, err := p.next(ctx, name, store.KindParallel)
	if err != nil {
		return host.Reply{}, err
	}
	if s != nil && s.Kind == store.KindBranch {
		// This run is the branch the parent forked here: the guest runs it now.
		p.advance(s.CompletedAt)
		return host.Reply{Status: abi.StatusBranch, Data: s.Output}, nil
	}
	if s != nil {
		if d := checkParallel(seq, s, req); d != nil {
			return host.Reply{}, d.failure()
		}
	}
	if s != nil && s.Status == store.StepCancelled {
		return p.replayCancelled(s), nil
	}
	if s == nil && p.cancelPending() {
		// The cancellation reaches the workflow here: nothing is forked.
		return p.deliverCancel(ctx, key, seq, store.KindParallel, nil)
	}
	if s == nil {
		return host.Reply{}, p.fork(ctx, key, seq, req)
	}
	if s.Status == store.StepWaiting && p.cancelPending() {
		r, resolved, err := p.cancelWait(ctx, key)
		if err != nil {
			return host.Reply{}, err
		}
		if resolved == nil {
			p.cancelBranches(ctx, key, p.cancelGrace())
			return r, nil
		}
		s = resolved // the join was decided first: it is answered, the cancel reaches the next call
	}
	if s.Status == store.StepWaiting {
		// The journal was read at claim time; the join may have been decided since.
		wake := p.byDeadline(nil)
		row, err := p.j.parkWait(ctx, key, wake)
		if err != nil {
			return host.Reply{}, err
		}
		if row == nil {
			return host.Reply{}, parallelSuspended(key, wake)
		}
		s = row
	}
	switch s.Status {
	case store.StepCompleted:
		p.advance(s.CompletedAt)
		if decidedEarly(s.Output) {
			p.cancelBranches(ctx, key, DefaultCancelGrace)
		}
		return host.Reply{Status: abi.StatusOK, Data: s.Output}, nil
	case store.StepFailed:
		p.advance(s.CompletedAt)
		p.cancelBranches(ctx, key, DefaultCancelGrace)
		return host.Reply{Status: abi.StatusStepFailed, Data: errorJSON(s.Error)}, nil
	}
	return host.Reply{}, nondeterministic("parallel %q: journal status %s is not one a parallel step can have", key, s.Status)
}

// fork forks the branches of step key (seq), reached for the first time, and suspends the
// parent until their join is decided: the error is the suspension, or why the fork failed.
func (p *pass) fork(ctx context.Context, key string, seq int, req abi.Parallel) error {
	x := p.caps.exec
	t := p.now()
	row := store.Step{RunID: p.run.ID, Seq: seq, Key: key, Kind: store.KindParallel, Match: forkRequest(req), StartedAt: t, WakeAt: p.byDeadline(nil)}
	f := store.Fork{Join: req.Join, MaxConcurrent: req.MaxConcurrent, Branches: make([]store.NewRun, req.Branches)}
	for i := range f.Branches {
		// The branch's id is its idempotency key: the parent's run id and the branch's parent
		// key, so no other run holds it.
		f.Branches[i] = store.NewRun{
			TenantID: p.run.TenantID, Workflow: p.run.Workflow, Version: p.run.Version, Digest: p.run.Digest, Input: p.run.Input,
			IdempotencyKey: p.run.ID + ":" + store.BranchKey(key, i), RetentionDays: p.run.RetentionDays, Deadline: p.run.Deadline,
		}
	}
	ids, err := p.j.fork(ctx, row, f)
	if err != nil {
		return err
	}
	// The branches are pending: this host's claimer takes them as it takes a queued start.
	x.backlog.Store(true)
	x.wake()
	p.log.Info("branches forked", "step", key, "branches", len(ids), "join", req.Join, "max_concurrent", req.MaxConcurrent)
	return parallelSuspended(key, row.WakeAt)
}

// forkRequest is what the journal keeps of a fork's request, in its step's Match, for a replay
// to compare the call it reaches with (checkParallel): the request as the host decoded it,
// defaults filled in.
func forkRequest(req abi.Parallel) json.RawMessage {
	b, _ := json.Marshal(req) // ints and a string: cannot fail
	return b
}

// parallelSuspended is the suspension of a parent at its parallel step: the join's decision
// may wake it at any time, as an event wakes a wait.
func parallelSuspended(key string, wake *time.Time) *suspended {
	out := childSuspended(key, wake)
	out.reason = "parallel " + key
	return out
}

// decidedEarly reports whether a ParallelResult says the join cancelled branches (or never
// started them): those still live are the parent's to cancel.
func decidedEarly(out json.RawMessage) bool {
	var r abi.ParallelResult
	if json.Unmarshal(out, &r) != nil {
		return false
	}
	for _, b := range r.Branches {
		if b.Status == abi.BranchCancelled {
			return true
		}
	}
	return false
}

// cancelGrace is the grace the parent's own cancellation leaves its children and branches:
// what is left of the parent's, within MaxCancelGrace.
func (p *pass) cancelGrace() time.Duration {
	if g := p.run.CancelGraceUntil; g != nil {
		return min(max(g.Sub(p.now()), time.Millisecond), MaxCancelGrace)
	}
	return DefaultCancelGrace
}

// cancelBranches cancels the live branches of step key: a branch that never ran (held, or not
// yet claimed) is terminated; one that ran is cancelled with grace, as a client's cancel would.
func (p *pass) cancelBranches(ctx context.Context, key string, grace time.Duration) {
	prefix := key + "["
	p.stopLinked(ctx, "branch", grace, true, func(c store.ChildRef) bool { return strings.HasPrefix(c.Link.ParentKey, prefix) })
}
