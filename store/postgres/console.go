package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// The reads the console makes beside the run listing: a page of a journal, the counts of a
// filtered listing and a run's lease holder.

// ListStepsFrom returns a page of a run's journal: one round trip, as ListSteps, that also
// tells an unknown run from one with no entries from `from` on.
func (s *Store) ListStepsFrom(ctx context.Context, tenantID, runID string, from, limit int) (_ []store.Step, err error) {
	defer classify(&err)
	return s.stepsOf(ctx, tenantID, runID, s.q("list_steps_from"), tenantID, runID, from, limit)
}

// CountRuns counts a listing's runs by status in one GROUP BY.
func (s *Store) CountRuns(ctx context.Context, tenantID string, f store.RunFilter) (_ map[store.RunStatus]int, err error) {
	defer classify(&err)
	var since, until *time.Time
	if !f.Since.IsZero() {
		since = &f.Since
	}
	if !f.Until.IsZero() {
		until = &f.Until
	}
	var input any
	if len(f.Input) > 0 {
		input = string(f.Input)
	}
	rows, err := s.pool.Query(ctx, s.q("count_filtered_runs"), tenantID, f.Workflow, since, until, input, f.Version, f.IdempotencyKey, f.Parent)
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	counts := map[store.RunStatus]int{}
	var st string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&st, &n}, func() error {
		counts[store.RunStatus(st)] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	return counts, nil
}

// RunLease reads a run's lease holder.
func (s *Store) RunLease(ctx context.Context, tenantID, runID string) (_ string, _ *time.Time, err error) {
	defer classify(&err)
	if !validUUID(runID) {
		return "", nil, fmt.Errorf("lease of run %q: %w", runID, store.ErrNotFound)
	}
	var owner string
	var expires *time.Time
	if err := s.pool.QueryRow(ctx, s.q("run_lease"), tenantID, runID).Scan(&owner, &expires); err != nil {
		return "", nil, fmt.Errorf("lease of run %s: %w", runID, notFound(err))
	}
	if owner == "" {
		return "", nil, nil
	}
	return owner, expires, nil
}
