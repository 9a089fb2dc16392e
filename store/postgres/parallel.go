package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// Parallel branches (store.Store.ForkBranches). The branches are created, linked, given their
// journals and the parent's step journaled in one transaction under the parent's fence; a
// branch's end is recorded and the join decided by the deferred trigger of migration 023, in
// the transaction that ends the branch.

// ForkBranches forks the branches of the parent's parallel step st; see store.Store.
func (s *Store) ForkBranches(ctx context.Context, l store.Lease, held *store.Step, st store.Step, f store.Fork, leaseFor time.Duration) (_ store.Step, _ []string, err error) {
	defer classify(&err)
	what := "fork branches at " + st.Key
	if len(f.Branches) == 0 || f.MaxConcurrent < 1 {
		return store.Step{}, nil, fmt.Errorf("%s: %d branches, %d at once: want at least 1 of each", what, len(f.Branches), f.MaxConcurrent)
	}
	if !validUUID(l.RunID) {
		return store.Step{}, nil, fmt.Errorf("%s: %w", what, store.ErrLeaseLost)
	}
	row := st
	var ids []string
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		ids = ids[:0]
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
		if _, err := tx.Exec(ctx, s.q("create_fork"), l.RunID, st.Key, f.Join, len(f.Branches)); err != nil {
			return err
		}
		for i, b := range f.Branches {
			if b.IdempotencyKey == "" {
				return fmt.Errorf("branch %d needs an id", i)
			}
			// A branch is a part of its parent's run, inside the slot the parent holds: it
			// obeys no flow control (its fork's MaxConcurrent bounds it).
			run, _, err := s.startRun(ctx, tx, b, startHow{noFlow: true})
			if errors.Is(err, pgx.ErrNoRows) {
				// The fork is journaled with its branches or not at all, so a taken id is
				// another run's.
				return fmt.Errorf("branch %d: id %q: %w", i, b.IdempotencyKey, store.ErrConflict)
			}
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, s.q("fork_branch"), run.ID, l.RunID, st.Key, i, st.Seq, store.BranchKey(st.Key, i),
				st.StartedAt, i < f.MaxConcurrent); err != nil {
				return err
			}
			ids = append(ids, run.ID)
		}
		row.Status = store.StepWaiting
		var id string
		args := append([]any{l.RunID, l.Epoch, row.WakeAt}, stepArgs(row)...)
		if err := tx.QueryRow(ctx, s.q("suspend_step"), args...).Scan(&id); errors.Is(err, pgx.ErrNoRows) {
			return store.ErrLeaseLost
		} else if err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return store.Step{}, nil, fmt.Errorf("%s: %w", what, err)
	}
	return row, ids, nil
}
