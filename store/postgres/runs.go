package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/internal/paging"
)

// CreateRun inserts a run through the gate (start.go), or returns the one its idempotency key
// already names.
func (s *Store) CreateRun(ctx context.Context, n store.NewRun) (_ store.Run, _ bool, err error) {
	defer classify(&err)
	run, created, err := s.startRun(ctx, nil, n, startHow{})
	if err == nil {
		return run, created, nil
	}
	run, err = s.existingRun(ctx, n, err)
	if err != nil {
		return store.Run{}, false, fmt.Errorf("create run: %w", err)
	}
	return run, false, nil
}

// existingRun is the run n's idempotency key names, when inserting n returned no row
// (insertErr) because of it.
func (s *Store) existingRun(ctx context.Context, n store.NewRun, insertErr error) (store.Run, error) {
	if !errors.Is(insertErr, pgx.ErrNoRows) || n.IdempotencyKey == "" {
		return store.Run{}, insertErr
	}
	run, err := scanRun(s.pool.QueryRow(ctx, s.q("get_run_by_key"), n.TenantID, n.Workflow, n.IdempotencyKey))
	if err != nil {
		return store.Run{}, fmt.Errorf("existing run for idempotency key: %w", err)
	}
	return run, nil
}

// CreateLeasedRun resolves the workflow and inserts a run leased to to.Owner (or pending,
// near the tenant's cap), in one statement, or returns the run its idempotency key already
// names, unleased.
func (s *Store) CreateLeasedRun(ctx context.Context, n store.NewRun, to store.LeaseTo) (_ store.Claim, _ bool, err error) {
	defer classify(&err)
	var epoch int64
	priority := 0
	if n.Priority != nil {
		priority = *n.Priority
		if priority < 0 {
			to.Owner = "" // a negative priority delays the run, even on a host with room for it
		}
	}
	run, err := scanRun(s.pool.QueryRow(ctx, s.q("create_leased_run"), n.TenantID, n.Workflow, n.Version,
		jsonOrNull(n.Input), n.IdempotencyKey, n.RetentionDays, n.DefaultRetentionDays, n.MaxRetentionDays,
		to.Owner, to.TenantCap, to.Reserve, millis(to.LeaseFor), s.wakeChannel, n.Deadline, retryArg(n.Retry), n.Attempt, priority, store.TriggerArg(n.Trigger)), &epoch)
	if err == nil {
		c := store.Claim{Run: run}
		if epoch > 0 {
			c.Lease = store.Lease{RunID: run.ID, Epoch: epoch}
		}
		return c, true, nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		// No row: a workflow with flow control (flow.go), an unknown workflow (say so as
		// ResolveWorkflow does) or a used key.
		if run, created, ok, ferr := s.createFlowRun(ctx, n); ok || ferr != nil {
			return store.Claim{Run: run}, created, ferr
		}
		if _, rerr := s.ResolveWorkflow(ctx, n.TenantID, n.Workflow, n.Version); rerr != nil {
			return store.Claim{}, false, rerr
		}
	}
	run, err = s.existingRun(ctx, n, err)
	if err != nil {
		return store.Claim{}, false, fmt.Errorf("create leased run: %w", err)
	}
	return store.Claim{Run: run}, false, nil
}

// GetRun returns one run of the tenant.
func (s *Store) GetRun(ctx context.Context, tenantID, runID string) (_ store.Run, err error) {
	defer classify(&err)
	if !validUUID(runID) {
		return store.Run{}, fmt.Errorf("run %q: %w", runID, store.ErrNotFound)
	}
	run, err := scanRun(s.pool.QueryRow(ctx, s.q("get_run"), tenantID, runID))
	if err != nil {
		return store.Run{}, fmt.Errorf("run %s: %w", runID, notFound(err))
	}
	return run, nil
}

// ListRuns lists runs newest first, a page at a time.
func (s *Store) ListRuns(ctx context.Context, tenantID string, f store.RunFilter) (_ []store.Run, _ string, err error) {
	defer classify(&err)
	limit := paging.Size(f.Limit)
	var (
		after   *time.Time
		afterID *string
	)
	if f.Cursor != "" {
		t, id, err := paging.Parse(f.Cursor)
		if err != nil || !validUUID(id) {
			return nil, "", fmt.Errorf("list runs: %w: bad cursor", store.ErrNotFound)
		}
		after, afterID = &t, &id
	}
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
	rows, err := s.pool.Query(ctx, s.q("list_runs"), tenantID, f.Workflow, string(f.Status), after, afterID, limit+1, since, until, input, f.Version, f.IdempotencyKey, f.Parent)
	if err != nil {
		return nil, "", fmt.Errorf("list runs: %w", err)
	}
	runs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Run, error) { return scanRun(r) })
	if err != nil {
		return nil, "", fmt.Errorf("list runs: %w", err)
	}
	runs, next := paging.Page(runs, limit)
	return runs, next, nil
}

// ListSteps returns a run's journal: one round trip that also tells an unknown run (not
// found) from one with no steps yet.
func (s *Store) ListSteps(ctx context.Context, tenantID, runID string) (_ []store.Step, err error) {
	defer classify(&err)
	return s.stepsOf(ctx, tenantID, runID, s.q("list_steps"), tenantID, runID)
}

// stepsOf runs query (with args), a read of the run's journal (ofKnownRun).
func (s *Store) stepsOf(ctx context.Context, tenantID, runID, query string, args ...any) ([]store.Step, error) {
	if !validUUID(runID) {
		return nil, fmt.Errorf("list steps of run %q: %w", runID, store.ErrNotFound)
	}
	steps, err := ofKnownRun(ctx, s, tenantID, runID, query, args, func(r pgx.CollectableRow) (store.Step, error) { return scanStep(r) })
	if err != nil {
		return nil, fmt.Errorf("list steps of run %s: %w", runID, err)
	}
	return steps, nil
}

// ofKnownRun runs query (with args), a read of one run's rows (its journal, its log), batched
// after run_status so that an unknown run (ErrNotFound) is told from one with no rows in the
// same round trip.
func ofKnownRun[T any](ctx context.Context, s *Store, tenantID, runID, query string, args []any, scan pgx.RowToFunc[T]) (_ []T, err error) {
	b := &pgx.Batch{}
	b.Queue(s.q("run_status"), tenantID, runID)
	b.Queue(query, args...)
	br := s.pool.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	var status string
	if err := br.QueryRow().Scan(&status); err != nil {
		return nil, notFound(err)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scan)
}

// CancelRun marks a live run cancelled and tells every host: one statement on success.
func (s *Store) CancelRun(ctx context.Context, tenantID, runID string) (_ store.Run, err error) {
	defer classify(&err)
	if !validUUID(runID) {
		return store.Run{}, fmt.Errorf("cancel run %q: %w", runID, store.ErrNotFound)
	}
	info := errorArg(&abi.ErrorInfo{Code: abi.CodeCancelled, Message: "the run was cancelled"})
	// The leading nil skips the pg_notify column.
	run, err := scanRun(s.pool.QueryRow(ctx, s.q("cancel_run"), tenantID, runID, info, s.cancelChannel), nil)
	if err == nil {
		return run, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return store.Run{}, fmt.Errorf("cancel run %s: %w", runID, err)
	}
	var status string
	if err := s.pool.QueryRow(ctx, s.q("run_status"), tenantID, runID).Scan(&status); err != nil {
		return store.Run{}, fmt.Errorf("cancel run %s: %w", runID, notFound(err))
	}
	return store.Run{}, fmt.Errorf("cancel run %s: %w: the run is already %s", runID, store.ErrConflict, status)
}

// RequestCancel asks a live run to cancel itself and tells every host: one statement.
func (s *Store) RequestCancel(ctx context.Context, tenantID, runID string, graceUntil time.Time) (_ store.Run, err error) {
	defer classify(&err)
	if !validUUID(runID) {
		return store.Run{}, fmt.Errorf("request cancel of run %q: %w", runID, store.ErrNotFound)
	}
	// The leading nils skip the pg_notify columns.
	run, err := scanRun(s.pool.QueryRow(ctx, s.q("request_cancel"), tenantID, runID, graceUntil, s.cancelChannel, s.wakeChannel), nil, nil)
	if err == nil {
		return run, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return store.Run{}, fmt.Errorf("request cancel of run %s: %w", runID, err)
	}
	var status string
	if err := s.pool.QueryRow(ctx, s.q("run_status"), tenantID, runID).Scan(&status); err != nil {
		return store.Run{}, fmt.Errorf("request cancel of run %s: %w", runID, notFound(err))
	}
	return store.Run{}, fmt.Errorf("request cancel of run %s: %w: the run is %s", runID, store.ErrConflict, status)
}

// RestartRun creates the run that restarts an ended one, with the journal it keeps: one
// statement, undone when fewer entries were copied than asked for.
func (s *Store) RestartRun(ctx context.Context, sourceID string, keep int, n store.NewRun) (store.Run, error) {
	return s.restartRun(ctx, "restart", sourceID, keep, false, n)
}

// ForkRun creates the run that forks an ended or live one, as RestartRun does.
func (s *Store) ForkRun(ctx context.Context, sourceID string, keep int, n store.NewRun) (store.Run, error) {
	return s.restartRun(ctx, "fork", sourceID, keep, true, n)
}

func (s *Store) restartRun(ctx context.Context, verb, sourceID string, keep int, live bool, n store.NewRun) (_ store.Run, err error) {
	defer classify(&err)
	if !validUUID(sourceID) {
		return store.Run{}, fmt.Errorf("%s run %q: %w", verb, sourceID, store.ErrNotFound)
	}
	var run store.Run
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// A restart or a fork is a new run of its workflow, under its flow control (start.go):
		// the flow path, when the workflow has one, places the run this statement inserts.
		insert := func(tx pgx.Tx, n store.NewRun) (store.Run, error) {
			var copied int
			run, err := scanRunThen(tx.QueryRow(ctx, s.q("restart_run"), n.TenantID, sourceID, n.Workflow, n.Version, n.Digest,
				jsonOrNull(n.Input), n.RetentionDays, n.Deadline, retryArg(n.Retry), keep, s.wakeChannel, live), &copied)
			if err == nil && copied != keep {
				err = fmt.Errorf("%w: the run's journal has %d ended entries before entry %d, not the %d to keep", store.ErrConflict, copied, keep, keep)
			}
			return run, err
		}
		var (
			err error
			ok  bool
		)
		run, _, ok, err = s.flowStart(ctx, tx, n, startHow{noDebounce: true, restart: insert})
		if !ok && err == nil {
			run, err = insert(tx, n)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			var status string
			if err := tx.QueryRow(ctx, s.q("run_status"), n.TenantID, sourceID).Scan(&status); err != nil {
				return notFound(err)
			}
			return fmt.Errorf("%w: the run is %s; only an ended run is restarted", store.ErrConflict, status)
		}
		return err
	})
	if err != nil {
		return store.Run{}, fmt.Errorf("%s run %s: %w", verb, sourceID, err)
	}
	return run, nil
}

// RunTrigger returns what started one run of the tenant: one statement (run_trigger.sql).
func (s *Store) RunTrigger(ctx context.Context, tenantID, runID string) (_ store.Trigger, err error) {
	defer classify(&err)
	if !validUUID(runID) {
		return store.Trigger{}, fmt.Errorf("run %q: %w", runID, store.ErrNotFound)
	}
	var (
		stored                                                            []byte
		continuedFrom, restartedFrom, createdBy, parent, key, ended, hook string
		attempt                                                           int
		branch                                                            bool
	)
	err = s.pool.QueryRow(ctx, s.q("run_trigger"), tenantID, runID).
		Scan(&stored, &continuedFrom, &attempt, &restartedFrom, &createdBy, &parent, &key, &branch, &ended, &hook)
	if err != nil {
		return store.Trigger{}, fmt.Errorf("trigger of run %s: %w", runID, notFound(err))
	}
	return store.TriggerOf(stored, continuedFrom, attempt, restartedFrom, createdBy, parent, key, branch, ended, hook), nil
}
