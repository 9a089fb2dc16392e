package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// RestartRequest restarts an ended run as a new run linked to it (store.Run.RestartedFrom):
// from scratch, or from the step FromStep with the journal before it kept, which the new run
// replays instead of running.
type RestartRequest struct {
	RunID string
	// Input is the new run's; empty: the ended run's. A new input with a kept journal is the
	// caller's to keep compatible: a workflow that takes another path through the kept steps
	// is nondeterministic.
	Input json.RawMessage
	// FromStep is the journal key to run again from; "": from scratch. Every entry before it
	// must have ended (completed, failed, timed out or cancelled).
	FromStep string
	// Version is the workflow version the new run runs; "": the ended run's.
	Version string
	// TimeoutMs gives the new run a deadline, as a start's; the ended run's is not kept.
	TimeoutMs int64
}

// RestartRun restarts an ended run of the tenant (RestartRequest). A live run is ErrConflict:
// cancel or terminate it first. The new run keeps the ended one's retention and retry policy,
// but no idempotency key (the ended run keeps its own).
func (s *Service) RestartRun(ctx context.Context, tenantID string, req RestartRequest) (store.Run, error) {
	return s.restartRun(ctx, tenantID, req, false)
}

// ForkRun starts a new run from a run of the tenant, live or ended, with its journal cut
// before the entry FromStep kept (a what-if: another input or, with Version, another module
// beside the run it copies), linked to it by RestartedFrom. FromStep "" keeps the journal so
// far: every entry up to the first that has not ended (a wait still waiting, a step being
// retried), which the fork then reaches on its own. The source is never changed; the fork
// keeps its retention and retry policy, not its idempotency key.
func (s *Service) ForkRun(ctx context.Context, tenantID string, req RestartRequest) (store.Run, error) {
	return s.restartRun(ctx, tenantID, req, true)
}

func (s *Service) restartRun(ctx context.Context, tenantID string, req RestartRequest, fork bool) (store.Run, error) {
	verb := "restart"
	if fork {
		verb = "fork"
	}
	fail := func(err error) (store.Run, error) {
		return store.Run{}, fmt.Errorf("%s run %s: %w", verb, req.RunID, err)
	}
	if err := checkText("fromStep", req.FromStep, abi.MaxNameLen+12); err != nil {
		return fail(err)
	}
	if err := checkText("version", req.Version, abi.MaxNameLen); err != nil {
		return fail(err)
	}
	if req.TimeoutMs < 0 || req.TimeoutMs > abi.MaxDelay.Milliseconds() {
		return fail(invalid("timeoutMs", "must be from 0 (no deadline) to %d, not %d", abi.MaxDelay.Milliseconds(), req.TimeoutMs))
	}
	src, err := s.cfg.Store.GetRun(ctx, tenantID, req.RunID)
	if err != nil {
		return fail(err)
	}
	if !fork && !src.Status.Terminal() {
		return fail(fmt.Errorf("%w: the run is %s; only an ended run is restarted (cancel or terminate it first, or fork it)", store.ErrConflict, src.Status))
	}
	limits, err := s.limits.get(ctx, tenantID)
	if err != nil {
		return fail(err)
	}
	input := src.Input
	if len(req.Input) > 0 {
		if input, err = checkInput(req.Input, limits); err != nil {
			return fail(err)
		}
	}
	wf, err := s.cfg.Store.ResolveWorkflow(ctx, tenantID, src.Workflow, cmp.Or(req.Version, src.Version))
	if err != nil {
		return fail(err)
	}
	keep := 0
	if req.FromStep != "" || fork {
		if keep, err = s.keptSteps(ctx, tenantID, src.ID, req.FromStep); err != nil {
			return fail(err)
		}
	}
	next := store.NewRun{
		TenantID: tenantID, Workflow: wf.Name, Version: wf.Version, Digest: wf.Digest, Input: input,
		RetentionDays: src.RetentionDays, Retry: src.Retry, Deadline: s.deadline(StartRequest{TimeoutMs: req.TimeoutMs}),
	}
	var run store.Run
	if fork {
		run, err = s.cfg.Store.ForkRun(ctx, src.ID, keep, next)
	} else {
		run, err = s.cfg.Store.RestartRun(ctx, src.ID, keep, next)
	}
	if err != nil {
		return fail(err)
	}
	s.obs.runStarted(ctx, run)
	// Created pending: this host's claimer takes it as it takes a queued start.
	s.exec.backlog.Store(true)
	s.exec.wake()
	return run, nil
}

// keptSteps is how many journal entries of run come before the entry key: all of them ended.
// Key "" is the journal so far: the entries before the first that has not ended.
func (s *Service) keptSteps(ctx context.Context, tenantID, runID, key string) (int, error) {
	steps, err := s.cfg.Store.ListSteps(ctx, tenantID, runID)
	if err != nil {
		return 0, err
	}
	for i, st := range steps {
		if st.Key == key {
			return i, nil
		}
		switch st.Status {
		case store.StepCompleted, store.StepFailed, store.StepTimedOut, store.StepCancelled:
		default:
			if key == "" {
				return i, nil
			}
			return 0, invalid("fromStep", "%q keeps entry %d (%s), which is %s: only ended steps are kept", key, i, st.Key, st.Status)
		}
	}
	if key == "" {
		return len(steps), nil
	}
	return 0, invalid("fromStep", "%q is not a step of the run's journal", key)
}
