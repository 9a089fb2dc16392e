package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wfhost/wfhost/store"
)

// PauseRun pauses a live run, or asks the host holding it to (store/postgres's pause_run.sql).
func (s *Store) PauseRun(ctx context.Context, tenantID, runID string) (_ store.Run, err error) {
	defer classify(&err)
	var run store.Run
	err = s.write(ctx, "pause run "+runID, func(w *wtx) error {
		var err error
		run, err = scanRun(w.queryRow("pause_run", tenantID, runID, micros(w.now)))
		if err == nil {
			if run.Status != store.StatusPaused {
				w.pauseRequested(run.ID)
			}
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if run, err = scanRun(w.queryRow("get_run", tenantID, runID)); err != nil {
			return notFound(err)
		}
		if run.Status != store.StatusPaused {
			return fmt.Errorf("%w: the run is %s", store.ErrConflict, run.Status)
		}
		return nil
	})
	if err != nil {
		return store.Run{}, fmt.Errorf("pause run %s: %w", runID, err)
	}
	return run, nil
}

// UnpauseRun resumes a paused run, checked and written in one transaction of the one writer.
func (s *Store) UnpauseRun(ctx context.Context, tenantID, runID string, to *store.RunMove) (_ store.Run, err error) {
	defer classify(&err)
	var run store.Run
	err = s.write(ctx, "resume run "+runID, func(w *wtx) error {
		var err error
		if run, err = scanRun(w.queryRow("get_run", tenantID, runID)); err != nil {
			return notFound(err)
		}
		if run.Status.Terminal() || run.Status == store.StatusNondeterministic {
			return fmt.Errorf("%w: the run is %s", store.ErrConflict, run.Status)
		}
		if run.Status != store.StatusPaused && run.PausedAt == nil {
			return nil // live and not pausing: nothing to resume
		}
		var paused bool
		if err := w.queryRow("workflow_paused", run.TenantID, run.Workflow, run.Version).Scan(&paused); err != nil {
			return err
		}
		if paused {
			return fmt.Errorf("%w: workflow %s version %s is paused; resume the workflow", store.ErrConflict, run.Workflow, run.Version)
		}
		version, digest := run.Version, run.Digest
		if to != nil {
			var entries int
			if err := w.queryRow("count_steps", run.ID).Scan(&entries); err != nil {
				return err
			}
			if run.Digest != to.From || entries != to.Entries {
				return fmt.Errorf("%w: the run changed since it was checked against version %s", store.ErrConflict, to.Version)
			}
			version, digest = to.Version, to.Digest
			if _, err := w.exec("delete_snapshot", run.ID); err != nil {
				return err
			}
		}
		if run, err = scanRun(w.queryRow("unpause_run", tenantID, runID, version, digest, micros(w.now))); err != nil {
			return err
		}
		w.wake()
		return nil
	})
	if err != nil {
		return store.Run{}, fmt.Errorf("resume run %s: %w", runID, err)
	}
	return run, nil
}

// HoldPaused writes held and pauses the run if its pause still stands.
func (s *Store) HoldPaused(ctx context.Context, l store.Lease, held *store.Step, always bool) (ok bool, err error) {
	defer classify(&err)
	err = s.write(ctx, "hold paused run "+l.RunID, func(w *wtx) error {
		ok = false
		tenant, err := w.fence("hold_paused", l.RunID, l.Epoch, always, micros(w.now), held != nil)
		if errors.Is(err, store.ErrLeaseLost) {
			// No row: the lease is lost, or the pause was withdrawn and the pass goes on.
			_, _, err = w.fenceGet(l)
			return err
		}
		if err != nil {
			return err
		}
		ok = true
		if held == nil {
			return nil
		}
		return w.upsertStep(l.RunID, tenant, *held)
	})
	if err != nil {
		return false, fmt.Errorf("hold paused run %s: %w", l.RunID, err)
	}
	return ok, nil
}

// PauseWorkflow keeps the pause and pauses the workflow's live runs. The one writer orders it
// against every run's creation, which reads workflow_pauses in its own statement.
func (s *Store) PauseWorkflow(ctx context.Context, tenantID, workflow, version string) (n int, err error) {
	defer classify(&err)
	err = s.write(ctx, "pause workflow "+workflow, func(w *wtx) error {
		n = 0
		if _, err := w.exec("keep_workflow_pause", tenantID, workflow, version, micros(w.now)); err != nil {
			return err
		}
		if err := w.refreshGates(tenantID, workflow, ""); err != nil {
			return err
		}
		rows, err := w.query("pause_workflow", tenantID, workflow, version, micros(w.now))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, status string
			if err := rows.Scan(&id, &status); err != nil {
				return err
			}
			n++
			if status != string(store.StatusPaused) {
				w.pauseRequested(id)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return 0, fmt.Errorf("pause workflow %s: %w", workflow, err)
	}
	return n, nil
}

// ResumeWorkflow lifts the pause and resumes the runs it held.
func (s *Store) ResumeWorkflow(ctx context.Context, tenantID, workflow, version string) (n int, err error) {
	defer classify(&err)
	err = s.write(ctx, "resume workflow "+workflow, func(w *wtx) error {
		lifted, err := w.affected("lift_workflow_pause", tenantID, workflow, version)
		if err != nil {
			return err
		}
		if lifted == 0 {
			return fmt.Errorf("%w: it is not paused", store.ErrNotFound)
		}
		if err := w.refreshGates(tenantID, workflow, ""); err != nil {
			return err
		}
		resumed, err := w.affected("resume_workflow", tenantID, workflow, version, micros(w.now))
		if err != nil {
			return err
		}
		n = int(resumed)
		if n > 0 {
			w.wake()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("resume workflow %s: %w", workflow, err)
	}
	return n, nil
}

// ListWorkflowPauses returns the tenant's paused workflows and versions.
func (s *Store) ListWorkflowPauses(ctx context.Context, tenantID string) (_ []store.WorkflowPause, err error) {
	defer classify(&err)
	rows, err := s.rdb.QueryContext(ctx, s.q("list_workflow_pauses"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("list workflow pauses: %w", err)
	}
	defer rows.Close()
	var out []store.WorkflowPause
	for rows.Next() {
		var (
			p  store.WorkflowPause
			at int64
		)
		if err := rows.Scan(&p.TenantID, &p.Workflow, &p.Version, &at); err != nil {
			return nil, fmt.Errorf("list workflow pauses: %w", err)
		}
		p.PausedAt = fromMicros(at)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list workflow pauses: %w", err)
	}
	return out, nil
}
