package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// Child runs (store.Store.StartChild). The child is created, linked and the parent's step
// journaled in one transaction under the parent's fence; the child's end resolves the
// parent's step by the deferred trigger of migration 020, in the transaction that ends it.

// StartChild starts a child run for the parent's step st; see store.Store.
func (s *Store) StartChild(ctx context.Context, l store.Lease, held *store.Step, st store.Step, child store.NewRun, link store.ChildLink, leaseFor time.Duration) (_ store.Step, _ string, err error) {
	defer classify(&err)
	what := "start child at " + st.Key
	if child.IdempotencyKey == "" {
		return store.Step{}, "", fmt.Errorf("%s: a child run needs an id", what)
	}
	if !validUUID(l.RunID) {
		return store.Step{}, "", fmt.Errorf("%s: %w", what, store.ErrLeaseLost)
	}
	var (
		row     store.Step
		childID string
	)
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		row, childID = st, ""
		var held0 bool
		if err := tx.QueryRow(ctx, s.q("fence_lock"), l.RunID, l.Epoch).Scan(&held0); errors.Is(err, pgx.ErrNoRows) {
			return store.ErrLeaseLost
		} else if err != nil {
			return err
		}
		if held != nil {
			var id string
			args := append([]any{l.RunID, l.Epoch, millis(leaseFor)}, stepArgs(*held)...)
			if err := tx.QueryRow(ctx, s.q("commit_step"), args...).Scan(&id); err != nil {
				return err
			}
		}
		// Under its workflow's flow control (start.go), never debounced (its id names it), and
		// inside its parent's slot when it is of its parent's own workflow.
		run, _, err := s.startRun(ctx, tx, child, startHow{noDebounce: true, parent: link.ParentRunID})
		switch {
		case errors.Is(err, abi.ErrFlowKey):
			info := store.ChildFlowRefused(child.Workflow, err)
			row.Status, row.Error, row.CompletedAt = store.StepFailed, &info, &row.StartedAt
			return s.writeChildStep(ctx, tx, l, row, leaseFor, false)
		case errors.Is(err, pgx.ErrNoRows):
			// The id is taken: by this step's own child (a write of this transaction that
			// committed before its answer was lost cannot be: the step would be journaled), or
			// by another run, which refuses the step.
			run, err = scanRun(tx.QueryRow(ctx, s.q("get_run_by_key"), child.TenantID, child.Workflow, child.IdempotencyKey))
			if err != nil {
				return err
			}
			var p store.ChildLink
			err = tx.QueryRow(ctx, s.q("parent_of"), child.TenantID, run.ID).Scan(&p.ParentRunID, &p.ParentKey, &p.ParentClose, &p.Awaited)
			if errors.Is(err, pgx.ErrNoRows) || (err == nil && (p.ParentRunID != link.ParentRunID || p.ParentKey != link.ParentKey)) {
				info := store.ChildRefused(child.IdempotencyKey, child.Workflow)
				row.Status, row.Error, row.CompletedAt = store.StepFailed, &info, &row.StartedAt
				return s.writeChildStep(ctx, tx, l, row, leaseFor, false)
			}
			if err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			if _, err := tx.Exec(ctx, s.q("link_child"), run.ID, link.ParentRunID, link.ParentKey, link.ParentClose, link.Awaited); err != nil {
				return err
			}
		}
		childID = run.ID
		if link.Awaited {
			row.Status = store.StepWaiting
			return s.writeChildStep(ctx, tx, l, row, leaseFor, true)
		}
		out, _ := json.Marshal(abi.ChildStarted{RunID: run.ID})
		row.Status, row.Output, row.CompletedAt = store.StepCompleted, out, &row.StartedAt
		return s.writeChildStep(ctx, tx, l, row, leaseFor, false)
	})
	if err != nil {
		return store.Step{}, "", fmt.Errorf("%s: %w", what, err)
	}
	return row, childID, nil
}

// writeChildStep journals the child step row, suspending the parent until row.WakeAt (an
// awaited child) or renewing its lease.
func (s *Store) writeChildStep(ctx context.Context, tx pgx.Tx, l store.Lease, row store.Step, leaseFor time.Duration, suspend bool) error {
	query, args := s.q("commit_step"), append([]any{l.RunID, l.Epoch, millis(leaseFor)}, stepArgs(row)...)
	if suspend {
		query, args = s.q("suspend_step"), append([]any{l.RunID, l.Epoch, row.WakeAt}, stepArgs(row)...)
	}
	var id string
	if err := tx.QueryRow(ctx, query, args...).Scan(&id); errors.Is(err, pgx.ErrNoRows) {
		return store.ErrLeaseLost
	} else if err != nil {
		return err
	}
	return nil
}

// ChildrenOf returns a run's children, oldest first.
func (s *Store) ChildrenOf(ctx context.Context, tenantID, runID string) (_ []store.ChildRef, err error) {
	defer classify(&err)
	if !validUUID(runID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, s.q("children_of"), tenantID, runID)
	if err != nil {
		return nil, fmt.Errorf("children of run %s: %w", runID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.ChildRef, error) {
		var c store.ChildRef
		err := r.Scan(&c.RunID, &c.Workflow, &c.Status, &c.Link.ParentRunID, &c.Link.ParentKey, &c.Link.ParentClose, &c.Link.Awaited)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("children of run %s: %w", runID, err)
	}
	return out, nil
}

// OrphanedChildren returns the live children a parent's end left running
// (orphaned_children.sql).
func (s *Store) OrphanedChildren(ctx context.Context, limit int) (_ []store.OrphanedChild, err error) {
	defer classify(&err)
	rows, err := s.pool.Query(ctx, s.q("orphaned_children"), limit)
	if err != nil {
		return nil, fmt.Errorf("orphaned children: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.OrphanedChild, error) {
		var c store.OrphanedChild
		err := r.Scan(&c.TenantID, &c.RunID, &c.ParentRunID)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("orphaned children: %w", err)
	}
	return out, nil
}

// ParentOf returns a run's link to its parent.
func (s *Store) ParentOf(ctx context.Context, tenantID, runID string) (_ store.ChildLink, _ bool, err error) {
	defer classify(&err)
	if !validUUID(runID) {
		return store.ChildLink{}, false, nil
	}
	var p store.ChildLink
	err = s.pool.QueryRow(ctx, s.q("parent_of"), tenantID, runID).Scan(&p.ParentRunID, &p.ParentKey, &p.ParentClose, &p.Awaited)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ChildLink{}, false, nil
	}
	if err != nil {
		return store.ChildLink{}, false, fmt.Errorf("parent of run %s: %w", runID, err)
	}
	return p, true, nil
}
