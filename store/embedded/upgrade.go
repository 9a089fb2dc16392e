package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wfhost/wfhost/store"
)

// UpgradeModule binds the module as PutModule does, moving no run but the gate's moves, in
// one write transaction; see store.Store.
func (s *Store) UpgradeModule(ctx context.Context, m store.Module, workflows []store.Workflow, replace bool, moves []store.RunMove) (_ []store.Workflow, _ []string, err error) {
	defer classify(&err)
	var (
		out   []store.Workflow
		moved []string
	)
	err = s.write(ctx, "upgrade module", func(w *wtx) error {
		var err error
		if out, _, err = w.putModule(m, workflows, replace, false); err != nil {
			return err
		}
		moved = moved[:0]
		for _, mv := range moves {
			n, err := w.affected("upgrade_run", m.TenantID, mv.RunID, mv.From, mv.Entries, mv.Version, m.Digest, micros(w.now))
			if err != nil {
				return err
			}
			if n == 0 {
				continue
			}
			// Its snapshot is of the old code.
			if _, err := w.exec("delete_snapshot", mv.RunID); err != nil {
				return err
			}
			moved = append(moved, mv.RunID)
		}
		if len(moved) > 0 {
			w.wake() // a nondeterministic run moved runs again now
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("upgrade module: %w", err)
	}
	return out, moved, nil
}

// ListOpenRuns returns a page of a workflow's open runs with their whole journals, in one
// read transaction so that the runs and their journals agree; see store.Store.
func (s *Store) ListOpenRuns(ctx context.Context, q store.OpenRunsQuery) (_ []store.OpenRun, err error) {
	defer classify(&err)
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("list open runs: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	rows, err := tx.QueryContext(ctx, s.q("list_open_runs"), q.TenantID, q.Workflow, q.Except, q.After, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("list open runs: %w", err)
	}
	runs, err := collect(rows, func(r scanner) (store.OpenRun, error) {
		run, err := scanRun(r)
		return store.OpenRun{Run: run}, err
	})
	if err != nil {
		return nil, fmt.Errorf("list open runs: %w", err)
	}
	for i := range runs {
		steps, err := tx.QueryContext(ctx, s.q("open_run_journal"), runs[i].Run.ID)
		if err != nil {
			return nil, fmt.Errorf("list open runs: journal: %w", err)
		}
		if runs[i].Journal, err = collect(steps, scanStep); err != nil {
			return nil, fmt.Errorf("list open runs: journal: %w", err)
		}
	}
	return runs, nil
}

// PutUpgradeReport keeps a report; see store.Store.
func (s *Store) PutUpgradeReport(ctx context.Context, r store.UpgradeReport) (err error) {
	defer classify(&err)
	return s.write(ctx, "put upgrade report", func(w *wtx) error {
		n, err := w.affected("put_upgrade_report", r.TenantID, r.ID, micros(w.now), string(r.Report))
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("put upgrade report: %w: report %s exists", store.ErrConflict, r.ID)
		}
		return nil
	})
}

// GetUpgradeReport returns a kept report; see store.Store.
func (s *Store) GetUpgradeReport(ctx context.Context, tenantID, id string) (_ store.UpgradeReport, err error) {
	defer classify(&err)
	r := store.UpgradeReport{TenantID: tenantID, ID: id}
	var (
		created int64
		report  string
	)
	if err := s.rdb.QueryRowContext(ctx, s.q("get_upgrade_report"), tenantID, id).Scan(&created, &report); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			err = store.ErrNotFound
		}
		return store.UpgradeReport{}, fmt.Errorf("upgrade report %q: %w", id, err)
	}
	r.CreatedAt, r.Report = fromMicros(created), []byte(report)
	return r, nil
}
