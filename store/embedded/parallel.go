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

// Parallel branches (store.Store.ForkBranches). Where store/postgres records a branch's end
// and decides its join by a deferred trigger, this store does it in Go in every transaction
// that ends a run (branchEnded, called with childEnded), after the run's end is written: one
// primary-key lookup in run_branches, which finds nothing for a run that is no branch.

// ForkBranches forks the branches of the parent's parallel step st; see store.Store.
func (s *Store) ForkBranches(ctx context.Context, l store.Lease, held *store.Step, st store.Step, f store.Fork, leaseFor time.Duration) (_ store.Step, _ []string, err error) {
	defer classify(&err)
	what := "fork branches at " + st.Key
	if len(f.Branches) == 0 || f.MaxConcurrent < 1 {
		return store.Step{}, nil, fmt.Errorf("%s: %d branches, %d at once: want at least 1 of each", what, len(f.Branches), f.MaxConcurrent)
	}
	row := st
	var ids []string
	err = s.write(ctx, what, func(w *wtx) error {
		ids = ids[:0]
		tenant, _, err := w.fenceGet(l)
		if err != nil {
			return err
		}
		if held != nil {
			if err := w.upsertStep(l.RunID, tenant, *held); err != nil {
				return err
			}
		}
		if _, err := w.exec("create_fork", l.RunID, st.Key, f.Join, len(f.Branches)); err != nil {
			return err
		}
		for i, b := range f.Branches {
			if b.IdempotencyKey == "" {
				return fmt.Errorf("branch %d needs an id", i)
			}
			// A branch is a part of its parent's run, inside the slot the parent holds: it
			// obeys no flow control (its fork's MaxConcurrent bounds it).
			run, created, err := w.startRun(b, startHow{noFlow: true})
			if err != nil {
				return err
			}
			if !created {
				// The fork is journaled with its branches or not at all, so a taken id is
				// another run's.
				return fmt.Errorf("branch %d: id %q: %w", i, b.IdempotencyKey, store.ErrConflict)
			}
			if _, err := w.exec("link_child", run.ID, l.RunID, store.BranchKey(st.Key, i), abi.ParentCloseCancel, true, micros(w.now)); err != nil {
				return err
			}
			status := "live"
			if i >= f.MaxConcurrent {
				status = "held"
			}
			if _, err := w.exec("prime_branch", run.ID, status == "live"); err != nil {
				return err
			}
			if _, err := w.exec("place_branch", run.ID, l.RunID, st.Key, i, status); err != nil {
				return err
			}
			if _, err := w.exec("copy_journal", run.ID, l.RunID, st.Seq); err != nil {
				return err
			}
			out, _ := json.Marshal(abi.Branch{Branch: i})
			at := st.StartedAt
			entry := store.Step{Seq: st.Seq, Key: st.Key, Kind: store.KindBranch, Status: store.StepCompleted, Output: out, StartedAt: at, CompletedAt: &at}
			if err := w.upsertStep(run.ID, tenant, entry); err != nil {
				return err
			}
			ids = append(ids, run.ID)
		}
		row.Status = store.StepWaiting
		return w.writeChildStep(l, tenant, row, leaseFor, true)
	})
	if err != nil {
		return store.Step{}, nil, fmt.Errorf("%s: %w", what, err)
	}
	return row, ids, nil
}

// branchEnded is called in every transaction that ends run runID, after its end is written:
// when it is a branch not yet ended, its end is recorded and its fork's join decided, as
// migration 023's branch_ended does for store/postgres (store.Store.ForkBranches).
func (w *wtx) branchEnded(runID string) error {
	var (
		parent, key, bstatus string
		branch               int
	)
	err := w.queryRow("branch_of", runID).Scan(&parent, &key, &branch, &bstatus)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && bstatus != "held" && bstatus != "live") {
		return nil
	}
	if err != nil {
		return err
	}
	var (
		workflow, status, continuedAs string
		output, errb                  sql.NullString
	)
	if err := w.queryRow("child_end", runID).Scan(&workflow, &status, &output, &errb, &continuedAs); err != nil {
		return err
	}
	rs := store.RunStatus(status)
	if !rs.Terminal() && rs != store.StatusContinued {
		return nil
	}
	ended, out := store.BranchFailed, any(nil)
	switch rs {
	case store.StatusCompleted:
		ended, out = store.BranchCompleted, "null"
		if output.Valid {
			out = output.String
		}
	case store.StatusCancelled:
		ended = store.BranchCancelled
	}
	var errArg any
	if errb.Valid {
		errArg = errb.String
	}
	if _, err := w.exec("end_branch", runID, ended, out, errArg); err != nil {
		return err
	}
	var (
		join            string
		branches, first int
		decided         bool
	)
	err = w.queryRow("fork_of", parent, key).Scan(&join, &branches, &first, &decided)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && decided) {
		return nil
	}
	if err != nil {
		return err
	}
	if ended == store.BranchCompleted && first < 0 {
		first = branch
	}
	ends, err := w.forkBranches(parent, key)
	if err != nil {
		return err
	}
	ok, failed := 0, 0
	var nextHeld string
	for _, e := range ends {
		switch e.status {
		case store.BranchCompleted:
			ok++
		case store.BranchFailed, store.BranchCancelled:
			failed++
		case "held":
			if nextHeld == "" {
				nextHeld = e.runID
			}
		}
	}
	outcome := store.JoinDecision(join, ended, ok, failed, branches)
	if _, err := w.exec("update_fork", parent, key, first, outcome != ""); err != nil {
		return err
	}
	if outcome == "" {
		if nextHeld == "" {
			return nil
		}
		if _, err := w.exec("release_branch", nextHeld); err != nil {
			return err
		}
		return w.wakeRun(nextHeld)
	}
	var res sql.Result
	if outcome == store.JoinOK {
		result := abi.ParallelResult{First: first, Branches: make([]abi.BranchResult, len(ends))}
		for i, e := range ends {
			result.Branches[i] = e.result()
		}
		b, _ := json.Marshal(result)
		res, err = w.exec("resolve_fork", parent, key, string(store.StepCompleted), string(b), nil, micros(w.now))
	} else {
		info := store.BranchFailure(branch, runID, rs, decodeError(errb))
		res, err = w.exec("resolve_fork", parent, key, string(store.StepFailed), nil, errorArg(&info), micros(w.now))
	}
	if err != nil {
		return err
	}
	return w.wakeIfResolved(res, parent)
}

// branchEnd is one row of fork_branches.sql.
type branchEnd struct {
	runID, status string
	branch        int
	output, err   sql.NullString
}

// result is the branch's entry in its fork's abi.ParallelResult.
func (e branchEnd) result() abi.BranchResult {
	switch e.status {
	case store.BranchCompleted:
		out := json.RawMessage("null")
		if e.output.Valid {
			out = json.RawMessage(e.output.String)
		}
		return abi.BranchResult{Status: abi.BranchCompleted, Output: out}
	case store.BranchFailed, store.BranchCancelled:
		return abi.BranchResult{Status: abi.BranchFailed, Error: decodeError(e.err)}
	}
	return abi.BranchResult{Status: abi.BranchCancelled}
}

func (w *wtx) forkBranches(parent, key string) ([]branchEnd, error) {
	rows, err := w.query("fork_branches", parent, key)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r scanner) (branchEnd, error) {
		var e branchEnd
		err := r.Scan(&e.runID, &e.branch, &e.status, &e.output, &e.err)
		return e, err
	})
}
