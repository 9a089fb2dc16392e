package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wfhost/wfhost/store"
)

// The reads the console makes beside the run listing: a page of a journal, the counts of a
// filtered listing and a run's lease holder.

// ListStepsFrom returns a page of a run's journal, checked as ListSteps is.
func (s *Store) ListStepsFrom(ctx context.Context, tenantID, runID string, from, limit int) (_ []store.Step, err error) {
	defer classify(&err)
	return s.stepsOf(ctx, tenantID, runID, "list_steps_from", tenantID, runID, from, limit)
}

// CountRuns counts a listing's runs by status. An input filter is tested in Go, as ListRuns
// tests it, so with one the query reads the status and input of every run the other filters
// select.
func (s *Store) CountRuns(ctx context.Context, tenantID string, f store.RunFilter) (_ map[store.RunStatus]int, err error) {
	defer classify(&err)
	var since, until any
	if !f.Since.IsZero() {
		since = micros(f.Since)
	}
	if !f.Until.IsZero() {
		until = micros(f.Until)
	}
	args := []any{tenantID, f.Workflow, since, until, f.Version, f.IdempotencyKey, f.Parent}
	counts := map[store.RunStatus]int{}
	if len(f.Input) == 0 {
		rows, err := s.rdb.QueryContext(ctx, s.q("count_filtered_runs"), args...)
		if err != nil {
			return nil, fmt.Errorf("count runs: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var st string
			var n int
			if err := rows.Scan(&st, &n); err != nil {
				return nil, fmt.Errorf("count runs: %w", err)
			}
			counts[store.RunStatus(st)] = n
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("count runs: %w", err)
		}
		return counts, nil
	}
	m, err := newMatcher(f.Input)
	if err != nil {
		return nil, fmt.Errorf("count runs: input filter: %w", err)
	}
	rows, err := s.rdb.QueryContext(ctx, s.q("count_filtered_runs_input"), args...)
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var input []byte
		if err := rows.Scan(&st, &input); err != nil {
			return nil, fmt.Errorf("count runs: %w", err)
		}
		if m.match(input) {
			counts[store.RunStatus(st)]++
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	return counts, nil
}

// RunLease reads a run's lease holder.
func (s *Store) RunLease(ctx context.Context, tenantID, runID string) (_ string, _ *time.Time, err error) {
	defer classify(&err)
	var owner string
	var expires sql.NullInt64
	if err := s.rdb.QueryRowContext(ctx, s.q("run_lease"), tenantID, runID).Scan(&owner, &expires); err != nil {
		return "", nil, fmt.Errorf("lease of run %q: %w", runID, notFound(err))
	}
	if owner == "" || !expires.Valid {
		return "", nil, nil
	}
	t := fromMicros(expires.Int64)
	return owner, &t, nil
}
