package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// UpgradeModule binds the module as PutModule does, moving no run but the gate's moves, in
// one transaction; see store.Store.
func (s *Store) UpgradeModule(ctx context.Context, m store.Module, workflows []store.Workflow, replace bool, moves []store.RunMove) (_ []store.Workflow, _ []string, err error) {
	defer classify(&err)
	var (
		out   []store.Workflow
		moved []string
	)
	ids := make([]string, 0, len(moves))
	from := make([]string, 0, len(moves))
	entries := make([]int32, 0, len(moves))
	versions := make([]string, 0, len(moves))
	for _, mv := range moves {
		if !validUUID(mv.RunID) {
			continue // names no run: nothing to move
		}
		ids, from, entries, versions = append(ids, mv.RunID), append(from, mv.From), append(entries, int32(mv.Entries)), append(versions, mv.Version)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if out, _, err = s.putModule(ctx, tx, m, workflows, replace, false); err != nil {
			return err
		}
		moved = moved[:0]
		if len(ids) == 0 {
			return nil
		}
		rows, err := tx.Query(ctx, s.q("upgrade_runs"), m.TenantID, ids, from, entries, versions, m.Digest)
		if err != nil {
			return err
		}
		if moved, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		if len(moved) == 0 {
			return nil
		}
		// A nondeterministic run moved runs again now: the hosts look for work.
		_, err = tx.Exec(ctx, s.q("notify"), s.wakeChannel, s.appName)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("upgrade module: %w", err)
	}
	if err := s.markHookedAfterBind(ctx, m.TenantID, workflows); err != nil {
		return nil, nil, fmt.Errorf("upgrade module: %w", err)
	}
	return out, moved, nil
}

// ListOpenRuns returns a page of a workflow's open runs with their whole journals, in two
// statements (the runs, then their journals); see store.Store.
func (s *Store) ListOpenRuns(ctx context.Context, q store.OpenRunsQuery) (_ []store.OpenRun, err error) {
	defer classify(&err)
	var after any
	if q.After != "" {
		if !validUUID(q.After) {
			return nil, fmt.Errorf("list open runs: %w: cursor %q is not a run id", store.ErrRefused, q.After)
		}
		after = q.After
	}
	rows, err := s.pool.Query(ctx, s.q("list_open_runs"), q.TenantID, q.Workflow, q.Except, after, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("list open runs: %w", err)
	}
	runs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.OpenRun, error) {
		run, err := scanRun(r)
		return store.OpenRun{Run: run}, err
	})
	if err != nil || len(runs) == 0 {
		return runs, err
	}
	ids := make([]string, len(runs))
	at := make(map[string]int, len(runs))
	for i, r := range runs {
		ids[i], at[r.Run.ID] = r.Run.ID, i
	}
	steps, err := s.pool.Query(ctx, s.q("open_run_journals"), ids)
	if err != nil {
		return nil, fmt.Errorf("list open runs: journals: %w", err)
	}
	defer steps.Close()
	for steps.Next() {
		st, err := scanStep(steps)
		if err != nil {
			return nil, fmt.Errorf("list open runs: journals: %w", err)
		}
		i := at[st.RunID]
		runs[i].Journal = append(runs[i].Journal, st)
	}
	if err := steps.Err(); err != nil {
		return nil, fmt.Errorf("list open runs: journals: %w", err)
	}
	return runs, nil
}

// PutUpgradeReport keeps a report; see store.Store.
func (s *Store) PutUpgradeReport(ctx context.Context, r store.UpgradeReport) (err error) {
	defer classify(&err)
	if !validUUID(r.ID) {
		return fmt.Errorf("put upgrade report: %w: id %q is not a UUID", store.ErrRefused, r.ID)
	}
	var created any
	err = s.pool.QueryRow(ctx, s.q("put_upgrade_report"), r.TenantID, r.ID, string(r.Report)).Scan(&created)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("put upgrade report: %w: report %s exists", store.ErrConflict, r.ID)
	}
	if err != nil {
		return fmt.Errorf("put upgrade report: %w", err)
	}
	return nil
}

// GetUpgradeReport returns a kept report; see store.Store.
func (s *Store) GetUpgradeReport(ctx context.Context, tenantID, id string) (_ store.UpgradeReport, err error) {
	defer classify(&err)
	if !validUUID(id) {
		return store.UpgradeReport{}, fmt.Errorf("upgrade report %q: %w", id, store.ErrNotFound)
	}
	r := store.UpgradeReport{TenantID: tenantID, ID: id}
	var report []byte
	if err := s.pool.QueryRow(ctx, s.q("get_upgrade_report"), tenantID, id).Scan(&r.CreatedAt, &report); err != nil {
		return store.UpgradeReport{}, fmt.Errorf("upgrade report %s: %w", id, notFound(err))
	}
	r.Report = report
	return r, nil
}
