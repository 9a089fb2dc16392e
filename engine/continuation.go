package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// Runs that hand on to a new run: continue-as-new (the guest's continue_as_new, ABI.md §4.14)
// and a run's own retry policy (store.Run.Retry). Both end the run and create the next one in
// the same transaction (store.Store.FinishAndContinue), so a crash between the two cannot
// lose the chain or fork it: either the run is still running (and its next activation ends it
// again) or it ended with its successor created.

// continueAsNew ends run as continued, with a fresh run of its workflow taking over with the
// guest's input: its own version (or the workflow's latest, when asked), deadline, retention
// and retry policy, an empty journal, and the run's idempotency key and unread events.
func (x *Executor) continueAsNew(ctx context.Context, log *slog.Logger, run store.Run, j *journal, faults int, c *abi.ContinueAsNew) *store.Run {
	limits, err := x.limits.get(ctx, run.TenantID)
	if err != nil {
		return x.fault(ctx, log, run, j, faults, fmt.Errorf("read the tenant's limits: %w", err))
	}
	if len(c.Input) > limits.MaxInputBytes {
		return x.finish(ctx, log, run, j, store.StatusFailed, nil, &abi.ErrorInfo{
			Code:    abi.CodePayloadTooLarge,
			Message: fmt.Sprintf("continue_as_new input is %d bytes, the tenant's input limit is %d", len(c.Input), limits.MaxInputBytes),
		})
	}
	next := successor(run, c.Input, 1)
	if c.LatestVersion {
		wf, err := x.cfg.Store.ResolveWorkflow(ctx, run.TenantID, run.Workflow, "")
		if err != nil {
			return x.fault(ctx, log, run, j, faults, fmt.Errorf("resolve the workflow's latest version: %w", err))
		}
		next.Version, next.Digest = wf.Version, wf.Digest
	}
	return x.end(ctx, log, run, j, &runEnd{status: store.StatusContinued, next: &next})
}

// successor is the run that continues run with input, as its attempt.
func successor(run store.Run, input []byte, attempt int) store.NewRun {
	return store.NewRun{
		TenantID: run.TenantID, Workflow: run.Workflow, Version: run.Version, Digest: run.Digest,
		Input: input, RetentionDays: run.RetentionDays, Deadline: run.Deadline, Retry: run.Retry,
		Attempt: attempt,
	}
}

// permanentFailures are the codes of failures a retry of the run would meet again, whatever
// the workflow does: the host's verdicts on the module or on the store, not the workflow's.
var permanentFailures = map[string]bool{
	abi.CodeABIViolation:     true,
	abi.CodeUnknownWorkflow:  true,
	abi.CodeStoreRefused:     true,
	abi.CodeMemoryLimit:      true,
	abi.CodeNondeterministic: true,
}

// retryOf is the run that retries run when it ends with status and info and its retry policy
// has attempts left (nil otherwise), claimable after the policy's backoff from now. A failure
// marked non-retryable, or a permanent one, is not retried; neither is a run past its
// deadline, which its retry would share.
func (x *Executor) retryOf(run store.Run, status store.RunStatus, info *abi.ErrorInfo) *store.NewRun {
	if status != store.StatusFailed || run.Retry == nil || info == nil || info.NonRetryable || permanentFailures[info.Code] {
		return nil
	}
	attempt := max(run.Attempt, 1)
	if attempt >= run.Retry.Attempts {
		return nil
	}
	now := x.cfg.Clock.Now()
	if run.Deadline != nil && !now.Before(*run.Deadline) {
		return nil
	}
	next := successor(run, run.Input, attempt+1)
	at := now.Add(run.Retry.Delay(attempt, x.cfg.Rand.Float64())).Truncate(time.Microsecond)
	next.NotBefore = &at
	return &next
}
