package postgres

import (
	"context"

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
