package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/internal/paging"
	"github.com/wfhost/wfhost/store/internal/workflows"
)

// CreateRun inserts a run, or returns the one its idempotency key already names.
func (s *Store) CreateRun(ctx context.Context, n store.NewRun) (_ store.Run, _ bool, err error) {
	defer classify(&err)
	var (
		run     store.Run
		created bool
	)
	err = s.write(ctx, "create run", func(w *wtx) error {
		var err error
		run, created, err = w.startRun(n, startHow{})
		return err
	})
	if err != nil {
		return store.Run{}, false, fmt.Errorf("create run: %w", err)
	}
	return run, created, nil
}

// CreateLeasedRun inserts a run leased to to.Owner (or pending, near the tenant's cap), or
// returns the one its idempotency key already names, unleased.
func (s *Store) CreateLeasedRun(ctx context.Context, n store.NewRun, to store.LeaseTo) (_ store.Claim, _ bool, err error) {
	defer classify(&err)
	var (
		claim   store.Claim
		created bool
	)
	err = s.write(ctx, "create leased run", func(w *wtx) error {
		var err error
		claim, created, err = w.createLeasedRun(n, to)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return store.Claim{}, false, err // already says which workflow, as ResolveWorkflow does
	}
	if err != nil {
		return store.Claim{}, false, fmt.Errorf("create leased run: %w", err)
	}
	return claim, created, nil
}

func (w *wtx) createLeasedRun(n store.NewRun, to store.LeaseTo) (store.Claim, bool, error) {
	wf, err := scanWorkflow(w.queryRow("resolve_workflow", n.TenantID, n.Workflow, n.Version))
	if err != nil {
		return store.Claim{}, false, workflows.ResolveError(n.Workflow, n.Version, notFound(err))
	}
	n.Workflow, n.Version, n.Digest = wf.Name, wf.Version, wf.Digest
	n.RetentionDays = store.RetentionDays(n.RetentionDays, wf.RetentionDays, n.DefaultRetentionDays, n.MaxRetentionDays)
	// The gate (021_run_gate.sql), read from the workflow row just resolved.
	var (
		flow           sql.NullString
		paused, hooked bool
	)
	if err := w.queryRow("workflow_gate", n.TenantID, n.Workflow, n.Version).Scan(&flow, &paused, &hooked); err != nil {
		return store.Claim{}, false, err
	}
	if flow.Valid {
		return w.createFlowRun(n, flow.String, startHow{})
	}
	priority := 0
	if n.Priority != nil {
		priority = *n.Priority
	}
	// A negative priority delays the run, even on a host with room for it; a run of a paused
	// workflow is created paused (create_run.sql), never leased.
	leased := to.Owner != "" && priority >= 0 && !paused
	if leased && to.TenantCap > 0 {
		var held int
		if err := w.queryRow("count_held", n.TenantID, micros(w.now)).Scan(&held); err != nil {
			return store.Claim{}, false, err
		}
		leased = held+to.Reserve <= to.TenantCap
	}
	if !leased {
		run, created, err := w.startRun(n, startHow{})
		if err == nil && created && priority != 0 && run.Status == store.StatusPending {
			at := w.now.Add(-time.Duration(priority) * time.Second)
			if _, err := w.exec("set_available", run.ID, micros(at)); err != nil {
				return store.Claim{}, false, err
			}
			run.AvailableAt = &at
		}
		return store.Claim{Run: run}, created, err
	}
	input, err := jsonOrNull(n.Input)
	if err != nil {
		return store.Claim{}, false, fmt.Errorf("input: %w", err)
	}
	if run, found, err := w.runByKey(n); found || err != nil {
		return store.Claim{Run: run}, false, err
	}
	var epoch int64
	run, err := scanRun(w.queryRow("create_leased_run", newUUID(), n.TenantID, n.Workflow, n.Version, n.Digest, input,
		nullIfEmpty(n.IdempotencyKey), n.RetentionDays, micros(w.now), to.Owner, micros(w.now.Add(to.LeaseFor)), timeArg(n.Deadline), retryArg(n.Retry), n.Attempt, hooked, store.TriggerArg(n.Trigger)), &epoch)
	if err != nil {
		return store.Claim{}, false, err
	}
	return store.Claim{Run: run, Lease: store.Lease{RunID: run.ID, Epoch: epoch}}, true, nil
}

// startHow says which parts of its workflow's flow control a run created by startRun obeys.
type startHow struct {
	// noFlow: the run runs inside a slot its parent holds already (a parallel branch), and
	// obeys no flow control.
	noFlow bool
	// noDebounce: the run is named by its caller (a child's id, a signal-with-start's key, a
	// restart's source), so it is never merged into another pending run of its key.
	noDebounce bool
	// parent, when set, is the run whose child this is: a child of its parent's own workflow
	// runs inside its parent's slot, since waiting for a slot its parent holds would never end.
	parent string
	// insert, when set, inserts the run itself (a restart, with the journal it keeps) in place
	// of create_run.sql; the flow then places it.
	insert func(store.NewRun) (store.Run, error)
}

// startRun is the one way this store creates a run from nothing, whatever starts it (a
// client, a trigger, a schedule, a signal-with-start, a parent, a hook, a restart; a leased
// start's insert, create_leased_run.sql, reads the same gate): a pending run available now,
// through the gate create_run.sql reads (paused, hooked), or, for a workflow with flow
// control, the flow path as how allows (flow.go). With an idempotency key already used for
// the tenant and workflow it returns that run instead, created false; a debounced start
// returns its key's pending run, created false.
func (w *wtx) startRun(n store.NewRun, how startHow) (store.Run, bool, error) {
	if run, found, err := w.runByKey(n); found || err != nil {
		return run, false, err
	}
	if how.insert == nil {
		run, err := w.insertRun(n, how.noFlow)
		if !errors.Is(err, sql.ErrNoRows) {
			return run, err == nil, err
		}
	}
	// No row: the workflow has flow control (create_run.sql); or a restart, which reads it.
	flow, err := w.workflowFlow(n)
	if err != nil {
		return store.Run{}, false, err
	}
	if how.parent != "" && flow != "" {
		var parentWorkflow string
		if err := w.queryRow("run_workflow", how.parent).Scan(&parentWorkflow); err != nil {
			return store.Run{}, false, err
		}
		if parentWorkflow == n.Workflow {
			flow = ""
		}
	}
	if flow == "" || how.noFlow {
		if how.insert != nil {
			run, err := how.insert(n)
			return run, err == nil, err
		}
		run, err := w.insertRun(n, true)
		return run, err == nil, err
	}
	c, created, err := w.createFlowRun(n, flow, how)
	return c.Run, created, err
}

// insertRun inserts n with create_run.sql, pending and available now, and wakes the hosts;
// sql.ErrNoRows when n's workflow has flow control and anyFlow is false.
func (w *wtx) insertRun(n store.NewRun, anyFlow bool) (store.Run, error) {
	input, err := jsonOrNull(n.Input)
	if err != nil {
		return store.Run{}, fmt.Errorf("input: %w", err)
	}
	run, err := scanRun(w.queryRow("create_run", newUUID(), n.TenantID, n.Workflow, n.Version, n.Digest, input,
		nullIfEmpty(n.IdempotencyKey), n.RetentionDays, micros(w.now), timeArg(n.Deadline), retryArg(n.Retry), n.Attempt, anyFlow, store.TriggerArg(n.Trigger)))
	if err != nil {
		return store.Run{}, err
	}
	w.wake()
	return run, nil
}

// runByKey finds the run n's idempotency key already names, if it has one.
func (w *wtx) runByKey(n store.NewRun) (store.Run, bool, error) {
	if n.IdempotencyKey == "" {
		return store.Run{}, false, nil
	}
	run, err := scanRun(w.queryRow("get_run_by_key", n.TenantID, n.Workflow, n.IdempotencyKey))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Run{}, false, nil
	}
	return run, err == nil, err
}

// GetRun returns one run of the tenant.
func (s *Store) GetRun(ctx context.Context, tenantID, runID string) (_ store.Run, err error) {
	defer classify(&err)
	run, err := scanRun(s.rdb.QueryRowContext(ctx, s.q("get_run"), tenantID, runID))
	if err != nil {
		return store.Run{}, fmt.Errorf("run %q: %w", runID, notFound(err))
	}
	return run, nil
}

// ListRuns lists runs newest first, a page at a time. An input filter is tested in Go with
// Postgres's containment rules (jsonmatch.go), so the query then reads on until the page fills.
func (s *Store) ListRuns(ctx context.Context, tenantID string, f store.RunFilter) (_ []store.Run, _ string, err error) {
	defer classify(&err)
	limit := paging.Size(f.Limit)
	var after, afterID any
	if f.Cursor != "" {
		t, id, err := paging.Parse(f.Cursor)
		if err != nil {
			return nil, "", fmt.Errorf("list runs: %w: bad cursor", store.ErrNotFound)
		}
		after, afterID = micros(t), id
	}
	var since, until any
	if !f.Since.IsZero() {
		since = micros(f.Since)
	}
	if !f.Until.IsZero() {
		until = micros(f.Until)
	}
	var m *matcher
	if len(f.Input) > 0 {
		mm, err := newMatcher(f.Input)
		if err != nil {
			return nil, "", fmt.Errorf("list runs: input filter: %w", err)
		}
		m = &mm
	}
	sqlLimit := limit + 1
	if m != nil {
		sqlLimit = -1 // no limit: the filter runs here
	}
	rows, err := s.rdb.QueryContext(ctx, s.q("list_runs"), tenantID, f.Workflow, string(f.Status), after, afterID,
		sqlLimit, since, until, f.Version, f.IdempotencyKey, f.Parent)
	if err != nil {
		return nil, "", fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var runs []store.Run
	for len(runs) <= limit && rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, "", fmt.Errorf("list runs: %w", err)
		}
		if m != nil && !m.match(r.Input) {
			continue
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("list runs: %w", err)
	}
	runs, next := paging.Page(runs, limit)
	return runs, next, nil
}

// ListSteps returns a run's journal; an unknown run is not found, a run with no steps an
// empty journal.
func (s *Store) ListSteps(ctx context.Context, tenantID, runID string) (_ []store.Step, err error) {
	defer classify(&err)
	return s.stepsOf(ctx, tenantID, runID, "list_steps", tenantID, runID)
}

// stepsOf runs query (with args), a read of the run's journal, in one read transaction with
// the check that the run exists, so an unknown run is told from one with no entries and the
// two answers agree.
func (s *Store) stepsOf(ctx context.Context, tenantID, runID, query string, args ...any) ([]store.Step, error) {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("list steps of run %s: %w", runID, err)
	}
	defer func() { _ = tx.Rollback() }()
	var status string
	if err := tx.QueryRowContext(ctx, s.q("run_status"), tenantID, runID).Scan(&status); err != nil {
		return nil, fmt.Errorf("list steps of run %q: %w", runID, notFound(err))
	}
	rows, err := tx.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("list steps of run %s: %w", runID, err)
	}
	steps, err := collect(rows, scanStep)
	if err != nil {
		return nil, fmt.Errorf("list steps of run %s: %w", runID, err)
	}
	return steps, nil
}

// CancelRun marks a live run cancelled and tells every host.
func (s *Store) CancelRun(ctx context.Context, tenantID, runID string) (_ store.Run, err error) {
	defer classify(&err)
	info := errorArg(&abi.ErrorInfo{Code: abi.CodeCancelled, Message: "the run was cancelled"})
	var run store.Run
	err = s.write(ctx, "cancel run "+runID, func(w *wtx) error {
		var err error
		run, err = scanRun(w.queryRow("cancel_run", tenantID, runID, info, micros(w.now), day))
		if err == nil {
			w.cancelled(run.ID)
			if _, err := w.exec("delete_snapshot", run.ID); err != nil {
				return err
			}
			// Whether it is a child is not read here: a cancel is rare, and childEnded looks.
			return w.ended(run.ID, true)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var status string
		if err := w.queryRow("run_status", tenantID, runID).Scan(&status); err != nil {
			return notFound(err)
		}
		return fmt.Errorf("%w: the run is already %s", store.ErrConflict, status)
	})
	if err != nil {
		return store.Run{}, err
	}
	return run, nil
}

// RequestCancel asks a live run to cancel itself and tells every host.
func (s *Store) RequestCancel(ctx context.Context, tenantID, runID string, graceUntil time.Time) (_ store.Run, err error) {
	defer classify(&err)
	var run store.Run
	err = s.write(ctx, "request cancel of run "+runID, func(w *wtx) error {
		var err error
		run, err = scanRun(w.queryRow("request_cancel", tenantID, runID, micros(graceUntil), micros(w.now)))
		if err == nil {
			w.cancelRequested(run.ID)
			w.wake()
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var status string
		if err := w.queryRow("run_status", tenantID, runID).Scan(&status); err != nil {
			return notFound(err)
		}
		return fmt.Errorf("%w: the run is %s", store.ErrConflict, status)
	})
	if err != nil {
		return store.Run{}, fmt.Errorf("request cancel of run %s: %w", runID, err)
	}
	return run, nil
}

// RestartRun creates the run that restarts an ended one, with the journal it keeps, in one
// transaction.
func (s *Store) RestartRun(ctx context.Context, sourceID string, keep int, n store.NewRun) (store.Run, error) {
	return s.restartRun(ctx, "restart", sourceID, keep, false, n)
}

// ForkRun creates the run that forks an ended or live one, as RestartRun does.
func (s *Store) ForkRun(ctx context.Context, sourceID string, keep int, n store.NewRun) (store.Run, error) {
	return s.restartRun(ctx, "fork", sourceID, keep, true, n)
}

func (s *Store) restartRun(ctx context.Context, verb, sourceID string, keep int, live bool, n store.NewRun) (_ store.Run, err error) {
	defer classify(&err)
	input, err := jsonOrNull(n.Input)
	if err != nil {
		return store.Run{}, fmt.Errorf("%s run %s: input: %w", verb, sourceID, err)
	}
	var run store.Run
	err = s.write(ctx, verb+" run "+sourceID, func(w *wtx) error {
		var status string
		if err := w.queryRow("run_status", n.TenantID, sourceID).Scan(&status); err != nil {
			return notFound(err)
		}
		if !live && !store.RunStatus(status).Terminal() {
			return fmt.Errorf("%w: the run is %s; only an ended run is restarted", store.ErrConflict, status)
		}
		// A restart or a fork is a new run of its workflow, under its flow control but never
		// debounced (startRun): the flow, when the workflow has one, places the run inserted here.
		insert := func(n store.NewRun) (store.Run, error) {
			run, err := scanRun(w.queryRow("restart_run", newUUID(), n.TenantID, n.Workflow, n.Version, n.Digest, input,
				n.RetentionDays, micros(w.now), timeArg(n.Deadline), retryArg(n.Retry), sourceID))
			if err != nil {
				return store.Run{}, err
			}
			res, err := w.exec("copy_steps", sourceID, run.ID, keep)
			if err != nil {
				return store.Run{}, err
			}
			if copied, _ := res.RowsAffected(); copied != int64(keep) {
				return store.Run{}, fmt.Errorf("%w: the run's journal has %d ended entries before entry %d, not the %d to keep", store.ErrConflict, copied, keep, keep)
			}
			w.wake()
			return run, nil
		}
		n.IdempotencyKey = "" // a restart has none
		var err error
		run, _, err = w.startRun(n, startHow{noDebounce: true, insert: insert})
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
	var (
		stored                                                            sql.NullString
		continuedFrom, restartedFrom, createdBy, parent, key, ended, hook string
		attempt                                                           int
		branch                                                            bool
	)
	err = s.rdb.QueryRowContext(ctx, s.q("run_trigger"), tenantID, runID).
		Scan(&stored, &continuedFrom, &attempt, &restartedFrom, &createdBy, &parent, &key, &branch, &ended, &hook)
	if err != nil {
		return store.Trigger{}, fmt.Errorf("trigger of run %s: %w", runID, notFound(err))
	}
	return store.TriggerOf([]byte(stored.String), continuedFrom, attempt, restartedFrom, createdBy, parent, key, branch, ended, hook), nil
}
