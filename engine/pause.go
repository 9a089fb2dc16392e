package engine

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// Pause and resume (issue 16, point 2; RATIONALE.md, "Pause and resume"). A paused run has
// status paused, which no claim takes. A run no host holds is paused by the store at once
// (store.Store.PauseRun); a run a host holds is asked (Run.PausedAt) and the host told: its
// pass holds at its next durable call, after the step before it is committed, by one fenced
// write (store.Store.HoldPaused) that suspends the run with no instance and no wake-up. A host
// that dies in between leaves the ask on the run; the next claim reads it and holds the run
// before anything of it runs (activate.go). A step whose attempts run out under
// abi.ExhaustedPause holds the run the same way, its last attempt journaled as a retry due
// now, so the resume's replay tries it once more.

// ErrResumeRefused is the error of a resume onto another version that a replay of the run
// against that version did not pass: it wraps store.ErrConflict, and ResumeRefused says why.
var ErrResumeRefused = fmt.Errorf("%w: resume refused", store.ErrConflict)

// ResumeRefused is a resume onto another version that the upgrade gate's replay refused: the
// run stays paused on its module.
type ResumeRefused struct {
	Check UpgradeRun
}

func (r *ResumeRefused) Error() string {
	what := string(r.Check.Verdict)
	if d := r.Check.Divergence; d != nil {
		what = fmt.Sprintf("%s at journal entry %d", what, d.Seq)
	}
	if r.Check.Note != "" {
		what += ": " + r.Check.Note
	}
	return fmt.Sprintf("resume run %s onto version %s: %s (%s)", r.Check.RunID, r.Check.Version, ErrResumeRefused, what)
}

func (r *ResumeRefused) Unwrap() error { return ErrResumeRefused }

// pauseAsked reports whether the run is to pause: asked as it was claimed, or since, by a
// notice to this activation.
func (p *pass) pauseAsked() bool {
	return p.run.PausedAt != nil || p.act != nil && p.act.pauseAsk.Load()
}

// holdIfAsked holds the run at the durable call key when a pause was asked of it and not
// withdrawn: the held-back step is written with the hold, and the pass ends. A cancel asked
// too goes first: the workflow is to see it.
func (p *pass) holdIfAsked(ctx context.Context, key string) error {
	if !p.pauseAsked() || p.cancelRequested() {
		return nil
	}
	return p.hold(ctx, key, nil, false)
}

// hold ends the pass with the run paused at the call key, writing row (a step whose attempts
// ran out, always) or else the held-back step. Unless always, a pause withdrawn meanwhile is
// not held: nothing is written and the pass goes on (nil).
func (p *pass) hold(ctx context.Context, key string, row *store.Step, always bool) error {
	held, err := p.j.holdPaused(ctx, row, always)
	if err != nil {
		return err
	}
	if !held {
		p.run.PausedAt = nil
		if p.act != nil {
			p.act.pauseAsk.Store(false)
		}
		return nil
	}
	p.log.Info("run paused", "step", key, "retries_exhausted", always)
	return &suspended{step: key, reason: "paused at " + key, paused: true}
}

// exhaustedPause holds the run whose step st ran out of attempts with retryable error row.
func (p *pass) exhaustedPause(ctx context.Context, st *openStep, row store.Step) error {
	done := *row.CompletedAt
	row.Status, row.WakeAt, row.CompletedAt = store.StepRetrying, &done, nil
	p.obs.stepDone(row.Error, done)
	p.log.Info("step attempts exhausted; pausing the run", "step", st.key, "attempt", st.attempt, "code", row.Error.Code, "error", row.Error.Message)
	return p.hold(ctx, st.key, &row, true)
}

// pauseActive tells the activation of runID, if it is active here, that a pause was asked of
// it, and evicts a pass of it parked here (its run no longer goes on from there).
func (x *Executor) pauseActive(runID string) {
	x.mu.Lock()
	a := x.active[runID]
	if a == nil {
		x.missed.record(runID, false, x.cfg.Clock.Now())
	}
	x.mu.Unlock()
	if a != nil {
		a.pauseAsk.Store(true)
	}
	x.unpark(runID, "paused")
}

// holdClaimed holds a claimed run that was asked to pause before this claim (its host died
// before the hold): nothing of it runs. It reports whether it did; a pause withdrawn since
// leaves the run to its activation.
func (x *Executor) holdClaimed(ctx context.Context, log *slog.Logger, c store.Claim) (bool, error) {
	if c.Run.PausedAt == nil || c.Run.CancelRequestedAt != nil {
		return false, nil
	}
	held, err := x.cfg.Store.HoldPaused(ctx, c.Lease, nil, false)
	if err == nil && held {
		log.Info("run paused as it was claimed: its pause was asked of a host that did not hold it")
	}
	return held, err
}

// PauseRun pauses a live run of the tenant: at once when no host holds it, else at its next
// durable call. A paused run is returned as it is.
func (s *Service) PauseRun(ctx context.Context, tenantID, runID string) (store.Run, error) {
	run, err := s.cfg.Store.PauseRun(ctx, tenantID, runID)
	if err != nil {
		return store.Run{}, err
	}
	// The notice reaches every host; this one need not wait for it.
	s.exec.pauseActive(runID)
	return run, nil
}

// ResumeRun resumes a paused run of the tenant. With version (not "" nor the run's own), the
// run moves to that version of its workflow if a dry replay of its journal against the
// version's module passes (the upgrade gate's check, upgrade.go); otherwise the resume is
// refused (*ResumeRefused) and the run stays paused where it was.
func (s *Service) ResumeRun(ctx context.Context, tenantID, runID, version string) (store.Run, error) {
	if err := checkVersion(version); err != nil {
		return store.Run{}, err
	}
	run, err := s.cfg.Store.GetRun(ctx, tenantID, runID)
	if err != nil {
		return store.Run{}, err
	}
	var move *store.RunMove
	if version != "" && version != run.Version {
		if move, err = s.checkResume(ctx, run, version); err != nil {
			return store.Run{}, err
		}
	}
	run, err = s.cfg.Store.UnpauseRun(ctx, tenantID, runID, move)
	if err != nil {
		return store.Run{}, err
	}
	s.exec.wake()
	return run, nil
}

// checkResume replays the paused run against version's module, dry, and returns the move it
// passed for.
func (s *Service) checkResume(ctx context.Context, run store.Run, version string) (*store.RunMove, error) {
	if run.Status != store.StatusPaused {
		return nil, fmt.Errorf("resume run %s onto version %s: %w: the run is %s; only a paused run moves", run.ID, version, store.ErrConflict, run.Status)
	}
	wf, err := s.cfg.Store.ResolveWorkflow(ctx, run.TenantID, run.Workflow, version)
	if err != nil {
		return nil, fmt.Errorf("resume run %s: %w", run.ID, err)
	}
	limits, err := s.Limits(ctx, run.TenantID)
	if err != nil {
		return nil, fmt.Errorf("resume run %s: %w", run.ID, err)
	}
	m, err := s.exec.modules.get(ctx, run.TenantID, wf.Digest)
	if err != nil {
		return nil, fmt.Errorf("resume run %s: load version %s: %w", run.ID, version, err)
	}
	journal, err := s.cfg.Store.ListSteps(ctx, run.TenantID, run.ID)
	if err != nil {
		return nil, fmt.Errorf("resume run %s: %w", run.ID, err)
	}
	var check UpgradeRun
	if err := s.checkRun(ctx, m, hostLimits(limits), store.OpenRun{Run: run, Journal: journal}, &check); err != nil {
		return nil, fmt.Errorf("resume run %s: %w", run.ID, err)
	}
	check.Version = version
	if check.Verdict != GateCompatible {
		return nil, &ResumeRefused{Check: check}
	}
	return &store.RunMove{RunID: run.ID, From: run.Digest, Entries: len(journal), Version: wf.Version, Digest: wf.Digest}, nil
}

// PauseWorkflow pauses a workflow of the tenant (version "") or one version of it: its live
// runs pause, and no run of it is activated until ResumeWorkflow. It says how many runs it
// paused or asked to pause.
func (s *Service) PauseWorkflow(ctx context.Context, tenantID, workflow, version string) (int, error) {
	if err := s.checkPauseTarget(ctx, tenantID, workflow, version); err != nil {
		return 0, err
	}
	n, err := s.cfg.Store.PauseWorkflow(ctx, tenantID, workflow, version)
	if err != nil {
		return 0, err
	}
	// The held runs' hosts are told by notice, this one too; a pass parked here goes on
	// nowhere, and the claimer skips paused runs.
	return n, nil
}

// ResumeWorkflow lifts a pause PauseWorkflow set and resumes the runs it held. It says how
// many runs it resumed.
func (s *Service) ResumeWorkflow(ctx context.Context, tenantID, workflow, version string) (int, error) {
	if err := s.checkPauseTarget(ctx, tenantID, workflow, version); err != nil {
		return 0, err
	}
	n, err := s.cfg.Store.ResumeWorkflow(ctx, tenantID, workflow, version)
	if err != nil {
		return 0, err
	}
	s.exec.wake()
	return n, nil
}

// WorkflowPauses returns the tenant's paused workflows and versions.
func (s *Service) WorkflowPauses(ctx context.Context, tenantID string) ([]store.WorkflowPause, error) {
	return s.cfg.Store.ListWorkflowPauses(ctx, tenantID)
}

// checkPauseTarget checks a workflow (and version) to pause or resume: well formed, and
// known to the tenant.
func (s *Service) checkPauseTarget(ctx context.Context, tenantID, workflow, version string) error {
	if err := abi.CheckName("workflow", workflow); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := checkVersion(version); err != nil {
		return err
	}
	if _, err := s.cfg.Store.ResolveWorkflow(ctx, tenantID, workflow, version); err != nil {
		return err
	}
	return nil
}

// checkVersion checks a workflow version named in a request ("" for none), by the rule of
// ABI.md §7.
func checkVersion(version string) error {
	if version == "" {
		return nil
	}
	if err := abi.CheckText("version", version, abi.MaxNameLen); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}
