package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// The wait methods each send their statements as one batch: pgx pipelines a batch in a single
// round trip, and Postgres runs the statements before the batch's Sync as one implicit
// transaction, each statement with a fresh snapshot. So a lock taken by one statement is held
// until the batch commits, and the statements after it see everything committed before the
// lock was granted. Statements after the fence are written to do nothing when it failed.

// ReachWait resolves a newly reached wait from a kept event, or journals it as waiting and
// suspends the run. See store.Store for the rules.
func (s *Store) ReachWait(ctx context.Context, l store.Lease, st store.Step, leaseFor time.Duration) (_ *store.Step, err error) {
	defer classify(&err)
	b := &pgx.Batch{}
	// The event lock comes before the run lock: Broadcast takes them in that order too.
	b.Queue(s.q("lock_wait_event"), l.RunID, st.Event, s.schema)
	b.Queue(s.q("fence_lock"), l.RunID, l.Epoch)
	b.Queue(s.q("reach_wait"), l.RunID, l.Epoch, millis(leaseFor), st.Seq, st.Key, st.Event, matchArg(st.Match),
		st.WakeAt, st.StartedAt, st.Attempt)
	var row store.Step
	err = s.fencedBatch(ctx, b, func(br pgx.BatchResults) error {
		var err error
		row, err = scanStep(br.QueryRow())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reach wait %s: %w", st.Key, err)
	}
	if row.Status == store.StepWaiting {
		return nil, nil
	}
	return &row, nil
}

// ParkWait suspends on a waiting step unless an event resolved it meanwhile.
func (s *Store) ParkWait(ctx context.Context, l store.Lease, key string, wakeAt *time.Time, leaseFor time.Duration) (_ *store.Step, err error) {
	defer classify(&err)
	b := &pgx.Batch{}
	b.Queue(s.q("fence_lock"), l.RunID, l.Epoch)
	b.Queue(s.q("park_wait"), l.RunID, l.Epoch, millis(leaseFor), wakeAt, key)
	var row store.Step
	err = s.fencedBatch(ctx, b, func(br pgx.BatchResults) error {
		var err error
		row, err = scanStep(br.QueryRow())
		return notFound(err)
	})
	if err != nil {
		return nil, fmt.Errorf("park wait %s: %w", key, err)
	}
	if row.Status == store.StepWaiting {
		return nil, nil
	}
	return &row, nil
}

// TimeoutWait times a waiting step out unless an event resolved it first.
func (s *Store) TimeoutWait(ctx context.Context, l store.Lease, key string, completedAt time.Time, leaseFor time.Duration) (_ store.Step, err error) {
	defer classify(&err)
	return s.endWait(ctx, l, key, "time out wait", leaseFor, completedAt, store.StepTimedOut, abi.WaitTimeout, nil)
}

// CancelWait ends the waiting step as cancelled, unless an event resolved it first.
func (s *Store) CancelWait(ctx context.Context, l store.Lease, key string, completedAt time.Time, info abi.ErrorInfo, leaseFor time.Duration) (_ store.Step, err error) {
	defer classify(&err)
	return s.endWait(ctx, l, key, "cancel wait", leaseFor, completedAt, store.StepCancelled, nil, errorArg(&info))
}

// endWait ends the waiting step key with status, output and errInfo (end_wait.sql) after
// fence_lock, unless an event resolved it first.
func (s *Store) endWait(ctx context.Context, l store.Lease, key, what string, leaseFor time.Duration, completedAt time.Time, status store.StepStatus, output, errInfo any) (store.Step, error) {
	b := &pgx.Batch{}
	b.Queue(s.q("fence_lock"), l.RunID, l.Epoch)
	b.Queue(s.q("end_wait"), l.RunID, l.Epoch, millis(leaseFor), key, completedAt, string(status), output, errInfo)
	var row store.Step
	err := s.fencedBatch(ctx, b, func(br pgx.BatchResults) error {
		var err error
		row, err = scanStep(br.QueryRow())
		return notFound(err)
	})
	if err != nil {
		return store.Step{}, fmt.Errorf("%s %s: %w", what, key, err)
	}
	return row, nil
}

// fencedBatch sends b, whose statements up to and including fence_lock return nothing of
// interest but the fence's row, and hands the results after it to rest. It returns
// store.ErrLeaseLost when the fence matched no run; the statements after it are written to do
// nothing then.
func (s *Store) fencedBatch(ctx context.Context, b *pgx.Batch, rest func(pgx.BatchResults) error) (err error) {
	br := s.pool.SendBatch(ctx, b)
	defer func() {
		// Close reads the batch to its end, including the implicit commit.
		if cerr := br.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	for range b.Len() - 2 {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	var held bool
	if err := br.QueryRow().Scan(&held); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrLeaseLost
		}
		return err
	}
	return rest(br)
}
