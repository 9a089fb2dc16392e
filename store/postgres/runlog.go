package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/internal/logdetail"
)

// ListRunLog returns a page of a run's lifecycle log (022_run_log.sql: the created entry read
// from the run, the rest written by triggers), batched after run_status as the journal reads
// are, so an unknown run is told from one with no entries after the cursor in one round trip.
func (s *Store) ListRunLog(ctx context.Context, tenantID, runID string, after int64, limit int) (_ []store.LogEntry, err error) {
	defer classify(&err)
	if !validUUID(runID) {
		return nil, fmt.Errorf("list log of run %q: %w", runID, store.ErrNotFound)
	}
	if limit < 1 || limit > store.MaxLogPage {
		return nil, fmt.Errorf("list log of run %s: limit %d is not from 1 to %d", runID, limit, store.MaxLogPage)
	}
	out, err := ofKnownRun(ctx, s, tenantID, runID, s.q("list_run_log"), []any{tenantID, runID, after, limit},
		func(r pgx.CollectableRow) (store.LogEntry, error) {
			e := store.LogEntry{RunID: runID}
			var (
				at     time.Time
				kind   string
				detail []byte
			)
			if err := r.Scan(&e.Seq, &at, &kind, &e.Host, &detail); err != nil {
				return e, err
			}
			e.At, e.Kind = at.UTC(), store.LogKind(kind)
			e.Detail, err = logdetail.Normalize(detail)
			return e, err
		})
	if err != nil {
		return nil, fmt.Errorf("list log of run %s: %w", runID, err)
	}
	return out, nil
}
