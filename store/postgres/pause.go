package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// PauseRun pauses a live run, or asks the host holding it to: one statement.
func (s *Store) PauseRun(ctx context.Context, tenantID, runID string) (_ store.Run, err error) {
	defer classify(&err)
	if !validUUID(runID) {
		return store.Run{}, fmt.Errorf("pause run %q: %w", runID, store.ErrNotFound)
	}
	// The leading nil skips the pg_notify column.
	run, err := scanRun(s.pool.QueryRow(ctx, s.q("pause_run"), tenantID, runID, s.cancelChannel), nil)
	if err == nil {
		return run, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return store.Run{}, fmt.Errorf("pause run %s: %w", runID, err)
	}
	run, err = s.GetRun(ctx, tenantID, runID)
	switch {
	case err != nil:
		return store.Run{}, fmt.Errorf("pause run %s: %w", runID, err)
	case run.Status == store.StatusPaused:
		return run, nil
	}
	return store.Run{}, fmt.Errorf("pause run %s: %w: the run is %s", runID, store.ErrConflict, run.Status)
}

// UnpauseRun resumes a paused run (moving it to to's version, when given): one statement.
func (s *Store) UnpauseRun(ctx context.Context, tenantID, runID string, to *store.RunMove) (_ store.Run, err error) {
	defer classify(&err)
	if !validUUID(runID) {
		return store.Run{}, fmt.Errorf("resume run %q: %w", runID, store.ErrNotFound)
	}
	var move store.RunMove
	if to != nil {
		move = *to
	}
	run, err := scanRun(s.pool.QueryRow(ctx, s.q("unpause_run"), tenantID, runID, move.Version, move.Digest,
		move.From, move.Entries, s.wakeChannel), nil)
	if err == nil {
		return run, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return store.Run{}, fmt.Errorf("resume run %s: %w", runID, err)
	}
	run, err = s.GetRun(ctx, tenantID, runID)
	if err != nil {
		return store.Run{}, fmt.Errorf("resume run %s: %w", runID, err)
	}
	why, conflict, err := s.notResumed(ctx, run, to)
	if err != nil || !conflict {
		return run, err
	}
	return store.Run{}, fmt.Errorf("resume run %s: %w: %s", runID, store.ErrConflict, why)
}

// notResumed says why unpause_run.sql left run as it was: a conflict, or (false) nothing to do.
func (s *Store) notResumed(ctx context.Context, run store.Run, to *store.RunMove) (string, bool, error) {
	if run.Status.Terminal() || run.Status == store.StatusNondeterministic {
		return "the run is " + string(run.Status), true, nil
	}
	if run.Status != store.StatusPaused && run.PausedAt == nil {
		return "", false, nil // live and not pausing: nothing to resume
	}
	var paused bool
	if err := s.pool.QueryRow(ctx, s.q("workflow_paused"), run.TenantID, run.Workflow, run.Version).Scan(&paused); err != nil {
		return "", false, err
	}
	if paused {
		return fmt.Sprintf("workflow %s version %s is paused; resume the workflow", run.Workflow, run.Version), true, nil
	}
	if to != nil {
		return fmt.Sprintf("the run changed since it was checked against version %s", to.Version), true, nil
	}
	return "the run changed while it was resumed", true, nil
}

// HoldPaused writes held and pauses the run if its pause still stands: one statement, on its
// own (a pause is rare; it need not wait for a group).
func (s *Store) HoldPaused(ctx context.Context, l store.Lease, held *store.Step, always bool) (_ bool, err error) {
	defer classify(&err)
	step := make([]any, 13) // nulls without a held step
	if held != nil {
		step = stepArgs(*held)
	}
	var id string
	err = s.pool.QueryRow(ctx, s.q("hold_paused"), append([]any{l.RunID, l.Epoch, always}, step...)...).Scan(&id)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("hold paused run %s: %w", l.RunID, err)
	}
	var leased bool
	if err := s.pool.QueryRow(ctx, s.q("lease_held"), l.RunID, l.Epoch).Scan(&leased); err != nil {
		return false, fmt.Errorf("hold paused run %s: %w", l.RunID, err)
	}
	if !leased {
		return false, fmt.Errorf("hold paused run %s: %w", l.RunID, store.ErrLeaseLost)
	}
	return false, nil
}

// PauseWorkflow keeps the pause and pauses the workflow's live runs, then waits out the
// writes of runs in flight and pauses the runs they created: a start pays nothing for a
// pause, and one racing it is still caught (021_pause.sql has the argument).
func (s *Store) PauseWorkflow(ctx context.Context, tenantID, workflow, version string) (n int, err error) {
	defer classify(&err)
	kept := false
	pass := func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.q("pause_workflow_lock"), tenantID, workflow); err != nil {
			return err
		}
		if !kept {
			if _, err := tx.Exec(ctx, s.q("keep_workflow_pause"), tenantID, workflow, version); err != nil {
				return err
			}
			if err := s.refreshGates(ctx, tx, tenantID, workflow, ""); err != nil {
				return err
			}
		} else if err := tx.QueryRow(ctx, s.q("workflow_pause_kept"), tenantID, workflow, version).Scan(&kept); err != nil || !kept {
			return err // lifted in between: the resume resumed what this pause paused
		}
		var paused, notified int
		if err := tx.QueryRow(ctx, s.q("pause_workflow"), tenantID, workflow, version, s.cancelChannel, kept).Scan(&paused, &notified); err != nil {
			return err
		}
		n += paused
		return nil
	}
	if err := s.twoPasses(ctx, pass, func() { kept = true }); err != nil {
		return 0, fmt.Errorf("pause workflow %s: %w", workflow, err)
	}
	return n, nil
}

// ResumeWorkflow lifts the pause and resumes the runs it held, then waits out the writes of
// runs in flight and resumes the runs created paused by starts that still saw the pause.
func (s *Store) ResumeWorkflow(ctx context.Context, tenantID, workflow, version string) (n int, err error) {
	defer classify(&err)
	lifted := false
	pass := func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.q("pause_workflow_lock"), tenantID, workflow); err != nil {
			return err
		}
		var resumed, woken int
		if lifted {
			if err := tx.QueryRow(ctx, s.q("resume_created_paused"), tenantID, workflow, version, s.wakeChannel).Scan(&resumed, &woken); err != nil {
				return err
			}
			n += resumed
			return nil
		}
		var count int
		if err := tx.QueryRow(ctx, s.q("resume_workflow"), tenantID, workflow, version, s.wakeChannel).Scan(&count, &resumed, &woken); err != nil {
			return err
		}
		if count == 0 {
			return fmt.Errorf("%w: it is not paused", store.ErrNotFound)
		}
		n += resumed
		return s.refreshGates(ctx, tx, tenantID, workflow, "")
	}
	if err := s.twoPasses(ctx, pass, func() { lifted = true }); err != nil {
		return 0, fmt.Errorf("resume workflow %s: %w", workflow, err)
	}
	return n, nil
}

// refreshGates sets the gate flags (026_run_gate.sql) of the tenant's workflow ("" every one)
// from the pauses and hooks tx now holds: every run insert reads them, in the same snapshot
// as it would have read the pauses and hooks themselves.
func (s *Store) refreshGates(ctx context.Context, tx pgx.Tx, tenantID, workflow, version string) error {
	_, err := tx.Exec(ctx, s.q("refresh_workflow_gates"), tenantID, workflow, version)
	return err
}

// twoPasses runs pass in a transaction, calls between, waits for every transaction writing
// runs at that moment to end (runs_writers_wait.sql), and runs pass again in another: the
// order that 021_pause.sql's argument rests on. between tells pass that the first committed.
func (s *Store) twoPasses(ctx context.Context, pass func(pgx.Tx) error, between func()) error {
	if err := pgx.BeginFunc(ctx, s.pool, pass); err != nil {
		return err
	}
	between()
	var waited int
	if err := s.pool.QueryRow(ctx, s.q("runs_writers_wait")).Scan(&waited); err != nil {
		return fmt.Errorf("wait for the starts in flight: %w", err)
	}
	return pgx.BeginFunc(ctx, s.pool, pass)
}

// ListWorkflowPauses returns the tenant's paused workflows and versions.
func (s *Store) ListWorkflowPauses(ctx context.Context, tenantID string) (_ []store.WorkflowPause, err error) {
	defer classify(&err)
	rows, err := s.pool.Query(ctx, s.q("list_workflow_pauses"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("list workflow pauses: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.WorkflowPause, error) {
		var p store.WorkflowPause
		err := row.Scan(&p.TenantID, &p.Workflow, &p.Version, &p.PausedAt)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("list workflow pauses: %w", err)
	}
	return out, nil
}
