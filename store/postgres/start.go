package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// Every run a Go path of this store creates from nothing passes through startRun (the API's
// leased start, CreateLeasedRun, through create_leased_run.sql and createFlowRun; a restart
// through restartRun; a continuation takes its predecessor's place in continue_run.sql). The
// gate is the run's workflows row (026_run_gate.sql): paused, hooked and flow, read by the
// insert statement itself. store/RATIONALE.md, "One gate", says which starts obey which part
// of a workflow's flow control.

// startHow says which parts of its workflow's flow control a run created by startRun obeys.
type startHow struct {
	// noFlow: the run runs inside a slot its parent holds already (a parallel branch), and
	// obeys no flow control.
	noFlow bool
	// noDebounce: the run is named by its caller (a child's id, a signal-with-start's key, a
	// restart's source), so it is never merged into another pending run of its key.
	noDebounce bool
	// parent, when set, is the run whose child this is: a child of its parent's own workflow
	// runs inside its parent's slot (as a branch does), since waiting for a slot its parent
	// holds would never end.
	parent string
	// restart, when set, inserts the run itself (restart_run.sql) instead of
	// create_flow_run.sql, and flow_place.sql places it.
	restart func(pgx.Tx, store.NewRun) (store.Run, error)
}

// startRun creates n (resolved: Version and Digest given) as a pending run through the gate,
// in tx, or on the pool when tx is nil (a start alone). A workflow with flow control takes the
// flow path, in a savepoint of tx, as how allows. pgx.ErrNoRows: n's idempotency key is
// already used, and nothing was written. created is false for a debounced start, which
// answers the key's pending run.
func (s *Store) startRun(ctx context.Context, tx pgx.Tx, n store.NewRun, how startHow) (run store.Run, created bool, err error) {
	var q querier = s.pool
	if tx != nil {
		q = tx
	}
	run, err = scanRun(q.QueryRow(ctx, s.q("create_run"), n.TenantID, n.Workflow, n.Version, n.Digest,
		jsonOrNull(n.Input), n.IdempotencyKey, n.RetentionDays, s.wakeChannel, n.Deadline,
		retryArg(n.Retry), n.Attempt, how.noFlow, store.TriggerArg(n.Trigger)))
	if !errors.Is(err, pgx.ErrNoRows) {
		return run, err == nil, err
	}
	// No row: the key is used, or the workflow has flow control (create_run.sql). The flow
	// path tells which, and its extra statements are paid by flow-controlled starts only.
	if how.noFlow {
		return store.Run{}, false, pgx.ErrNoRows
	}
	var sp pgx.Tx
	if tx != nil {
		sp, err = tx.Begin(ctx) // a savepoint: a start that fails must not undo its caller's writes
	} else {
		sp, err = s.pool.Begin(ctx)
	}
	if err != nil {
		return store.Run{}, false, err
	}
	defer func() {
		if err != nil {
			_ = sp.Rollback(ctx)
		}
	}()
	if how.parent != "" {
		var parentWorkflow string
		if err := sp.QueryRow(ctx, s.q("run_workflow"), how.parent).Scan(&parentWorkflow); err != nil {
			return store.Run{}, false, err
		}
		if parentWorkflow == n.Workflow {
			run, err = scanRun(sp.QueryRow(ctx, s.q("create_run"), n.TenantID, n.Workflow, n.Version, n.Digest,
				jsonOrNull(n.Input), n.IdempotencyKey, n.RetentionDays, s.wakeChannel, n.Deadline,
				retryArg(n.Retry), n.Attempt, true, store.TriggerArg(n.Trigger)))
			if err != nil {
				return store.Run{}, false, err
			}
			return run, true, sp.Commit(ctx)
		}
	}
	run, created, ok, err := s.flowStart(ctx, sp, n, how)
	switch {
	case errors.Is(err, errFlowKeyUsed) || err == nil && !ok,
		err == nil && !created && n.IdempotencyKey != "" && run.IdempotencyKey == n.IdempotencyKey:
		err = pgx.ErrNoRows // the key is used (no flow: create_run.sql found it so)
		return store.Run{}, false, err
	case err != nil:
		return store.Run{}, false, err
	}
	return run, created, sp.Commit(ctx)
}
