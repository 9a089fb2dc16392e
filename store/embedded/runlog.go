package embedded

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/internal/logdetail"
)

// ListRunLog returns a page of a run's lifecycle log (017_run_log.sql: the created entry read
// from the run, the rest written by triggers), in one read transaction with the check that
// the run exists, as the journal reads.
func (s *Store) ListRunLog(ctx context.Context, tenantID, runID string, after int64, limit int) (_ []store.LogEntry, err error) {
	defer classify(&err)
	if limit < 1 || limit > store.MaxLogPage {
		return nil, fmt.Errorf("list log of run %s: limit %d is not from 1 to %d", runID, limit, store.MaxLogPage)
	}
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("list log of run %s: %w", runID, err)
	}
	defer func() { _ = tx.Rollback() }()
	var status string
	if err := tx.QueryRowContext(ctx, s.q("run_status"), tenantID, runID).Scan(&status); err != nil {
		return nil, fmt.Errorf("list log of run %q: %w", runID, notFound(err))
	}
	rows, err := tx.QueryContext(ctx, s.q("list_run_log"), tenantID, runID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list log of run %s: %w", runID, err)
	}
	out, err := collect(rows, func(r scanner) (store.LogEntry, error) {
		e := store.LogEntry{RunID: runID}
		var (
			at     int64
			kind   string
			detail sql.NullString
		)
		if err := r.Scan(&e.Seq, &at, &kind, &e.Host, &detail); err != nil {
			return e, err
		}
		e.At, e.Kind = fromMicros(at), store.LogKind(kind)
		var err error
		e.Detail, err = logdetail.Normalize([]byte(detail.String))
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("list log of run %s: %w", runID, err)
	}
	return out, nil
}
