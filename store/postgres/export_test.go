package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// The storetest.SnapshotRows hooks, in the test build only: the Snapshots tests look at the
// snapshots table itself where no store method shows it (a finished run's snapshot).

// HasSnapshotRow reports whether the run has a row in snapshots.
func (s *Store) HasSnapshotRow(ctx context.Context, runID string) (bool, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE run_id = $1`, runID).Scan(&n)
	return n > 0, err
}

// PlantSnapshotRow writes snap for its run, unfenced, whatever the run's state.
func (s *Store) PlantSnapshotRow(ctx context.Context, snap store.Snapshot) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO snapshots (run_id, tenant_id, seq, last_key, code, data)
		SELECT id, tenant_id, $2, $3, $4, $5 FROM runs WHERE id = $1`, snap.RunID, snap.Seq, snap.LastKey, snap.Code, snap.Data)
	return err
}

// The storetest.LogRows hooks.

// RunLogRows counts the run's rows in run_log.
func (s *Store) RunLogRows(ctx context.Context, runID string) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM run_log WHERE run_id = $1`, runID).Scan(&n)
	return n, err
}

// TamperRunLog tries to rewrite the run's log rows.
func (s *Store) TamperRunLog(ctx context.Context, runID string) error {
	_, err := s.pool.Exec(ctx, `UPDATE run_log SET kind = 'ended' WHERE run_id = $1`, runID)
	return err
}

// The hooks of pause_race_test.go: a start held open in its transaction while a workflow's
// pause or resume runs, and a look at whether that pause is waiting for it.

// StartInFlight begins a transaction and starts a run in it through startRun, the gate of a
// start, a child's start, a trigger's and a signal-with-start, and returns the transaction
// still open.
func (s *Store) StartInFlight(ctx context.Context, n store.NewRun) (pgx.Tx, store.Run, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, store.Run{}, err
	}
	run, _, err := s.startRun(ctx, tx, n, startHow{})
	if err != nil {
		_ = tx.Rollback(ctx)
		return nil, store.Run{}, err
	}
	return tx, run, nil
}

// WaitingForWriters reports whether one of this store's connections is in
// runs_writers_wait.sql: a workflow's pause or resume between its two passes.
func (s *Store) WaitingForWriters(ctx context.Context) (bool, error) {
	var waiting bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
		WHERE application_name = $1 AND state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%runs_writers_wait(%')`,
		s.appName).Scan(&waiting)
	return waiting, err
}
