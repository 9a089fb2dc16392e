package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// Child runs (store.Store.StartChild). Where store/postgres resolves an awaited child's parent
// step by a deferred trigger, this store does it in Go in a transaction that ends a child run
// (childEnded, childContinued), after the run's end is written. A finish reads runs.is_child
// from the row it updates (finish.sql), so a run that is no child looks nothing up; a cancel,
// rare, looks in run_parents.

// StartChild starts a child run for the parent's step st; see store.Store.
func (s *Store) StartChild(ctx context.Context, l store.Lease, held *store.Step, st store.Step, child store.NewRun, link store.ChildLink, leaseFor time.Duration) (_ store.Step, _ string, err error) {
	defer classify(&err)
	what := "start child at " + st.Key
	if child.IdempotencyKey == "" {
		return store.Step{}, "", fmt.Errorf("%s: a child run needs an id", what)
	}
	var (
		row     store.Step
		childID string
	)
	err = s.write(ctx, what, func(w *wtx) error {
		row, childID = st, ""
		tenant, _, err := w.fenceGet(l)
		if err != nil {
			return err
		}
		if held != nil {
			if err := w.upsertStep(l.RunID, tenant, *held); err != nil {
				return err
			}
		}
		run, found, err := w.runByKey(child)
		if err != nil {
			return err
		}
		if found {
			p, ok, err := w.childLink(run.ID)
			if err != nil {
				return err
			}
			if !ok || p.ParentRunID != link.ParentRunID || p.ParentKey != link.ParentKey {
				info := store.ChildRefused(child.IdempotencyKey, child.Workflow)
				row.Status, row.Error, row.CompletedAt = store.StepFailed, &info, &row.StartedAt
				return w.writeChildStep(l, tenant, row, leaseFor, false)
			}
		} else {
			// Under its workflow's flow control (startRun), never debounced (its id names
			// it), and inside its parent's slot when it is of its parent's own workflow.
			run, _, err = w.startRun(child, startHow{noDebounce: true, parent: link.ParentRunID})
			if errors.Is(err, abi.ErrFlowKey) {
				info := store.ChildFlowRefused(child.Workflow, err)
				row.Status, row.Error, row.CompletedAt = store.StepFailed, &info, &row.StartedAt
				return w.writeChildStep(l, tenant, row, leaseFor, false)
			}
			if err != nil {
				return err
			}
			if _, err := w.exec("link_child", run.ID, link.ParentRunID, link.ParentKey, link.ParentClose, link.Awaited, micros(w.now)); err != nil {
				return err
			}
			if _, err := w.exec("mark_child", run.ID); err != nil {
				return err
			}
		}
		childID = run.ID
		if link.Awaited {
			row.Status = store.StepWaiting
			return w.writeChildStep(l, tenant, row, leaseFor, true)
		}
		out, _ := json.Marshal(abi.ChildStarted{RunID: run.ID})
		row.Status, row.Output, row.CompletedAt = store.StepCompleted, out, &row.StartedAt
		return w.writeChildStep(l, tenant, row, leaseFor, false)
	})
	if err != nil {
		return store.Step{}, "", fmt.Errorf("%s: %w", what, err)
	}
	return row, childID, nil
}

// writeChildStep journals the child step row, suspending the parent until row.WakeAt (an
// awaited child) or renewing its lease.
func (w *wtx) writeChildStep(l store.Lease, tenant string, row store.Step, leaseFor time.Duration, suspend bool) error {
	var err error
	if suspend {
		_, err = w.fence("suspend_progressed", l.RunID, l.Epoch, timeArg(row.WakeAt), micros(w.now))
	} else {
		_, err = w.fence("renew_lease", l.RunID, l.Epoch, micros(w.now)+leaseFor.Microseconds(), micros(w.now))
	}
	if err != nil {
		return err
	}
	return w.upsertStep(l.RunID, tenant, row)
}

// childLink reads a run's link to its parent.
func (w *wtx) childLink(runID string) (store.ChildLink, bool, error) {
	var p store.ChildLink
	err := w.queryRow("child_link", runID).Scan(&p.ParentRunID, &p.ParentKey, &p.ParentClose, &p.Awaited)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ChildLink{}, false, nil
	}
	return p, err == nil, err
}

// childEnded is called in every transaction that ends a child run (terminal), after its end is
// written: when it is an awaited child whose chain ends here, the parent's step, if it still
// waits, is completed or failed with the child's end, and the parent made available now.
func (w *wtx) childEnded(runID string) error {
	// A branch is a child whose end its fork's join takes (parallel.go).
	if err := w.branchEnded(runID); err != nil {
		return err
	}
	p, ok, err := w.childLink(runID)
	if err != nil || !ok || !p.Awaited {
		return err
	}
	var (
		workflow, status, continuedAs string
		output, errb                  sql.NullString
	)
	if err := w.queryRow("child_end", runID).Scan(&workflow, &status, &output, &errb, &continuedAs); err != nil {
		return err
	}
	if continuedAs != "" || !store.RunStatus(status).Terminal() {
		return nil
	}
	var res sql.Result
	if store.RunStatus(status) == store.StatusCompleted {
		out := "null"
		if output.Valid {
			out = output.String
		}
		res, err = w.exec("resolve_child", p.ParentRunID, p.ParentKey, string(store.StepCompleted), out, nil, micros(w.now))
	} else {
		info := store.ChildFailure(runID, workflow, store.RunStatus(status), decodeError(errb))
		res, err = w.exec("resolve_child", p.ParentRunID, p.ParentKey, string(store.StepFailed), nil, errorArg(&info), micros(w.now))
	}
	if err != nil {
		return err
	}
	return w.wakeIfResolved(res, p.ParentRunID)
}

// wakeIfResolved makes a parent whose waiting step res resolved (a child's end, a fork's join)
// claimable now and tells every host, as the triggers of store/postgres's migrations 020 and
// 023 do. A step no longer waiting (res touched nothing) wakes nobody.
func (w *wtx) wakeIfResolved(res sql.Result, parentRunID string) error {
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	return w.wakeRun(parentRunID)
}

// wakeRun makes a live run claimable now and tells every host. Not Self: the host whose
// transaction woke it (that ended a child, released a branch) must look for it too.
func (w *wtx) wakeRun(runID string) error {
	if _, err := w.exec("wake_live_run", runID, micros(w.now)); err != nil {
		return err
	}
	w.notices = append(w.notices, store.Notice{Kind: store.NoticeWake})
	return nil
}

// childContinued hands a child's link, and its mark, on to the run that continues it.
func (w *wtx) childContinued(runID, next string) error {
	if _, err := w.exec("copy_child_link", runID, next, micros(w.now)); err != nil {
		return err
	}
	_, err := w.exec("mark_child", next)
	return err
}

// ChildrenOf returns a run's children, oldest first.
func (s *Store) ChildrenOf(ctx context.Context, tenantID, runID string) (_ []store.ChildRef, err error) {
	defer classify(&err)
	rows, err := s.rdb.QueryContext(ctx, s.q("children_of"), tenantID, runID)
	if err != nil {
		return nil, fmt.Errorf("children of run %s: %w", runID, err)
	}
	out, err := collect(rows, func(r scanner) (store.ChildRef, error) {
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
	rows, err := s.rdb.QueryContext(ctx, s.q("orphaned_children"), limit)
	if err != nil {
		return nil, fmt.Errorf("orphaned children: %w", err)
	}
	out, err := collect(rows, func(r scanner) (store.OrphanedChild, error) {
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
	var p store.ChildLink
	err = s.rdb.QueryRowContext(ctx, s.q("parent_of"), tenantID, runID).Scan(&p.ParentRunID, &p.ParentKey, &p.ParentClose, &p.Awaited)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ChildLink{}, false, nil
	}
	if err != nil {
		return store.ChildLink{}, false, fmt.Errorf("parent of run %s: %w", runID, err)
	}
	return p, true, nil
}
