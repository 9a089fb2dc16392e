package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// Signal sends an event to one run: one round trip, one transaction. See store.Store.
func (s *Store) Signal(ctx context.Context, p store.SignalParams) (_ store.SignalResult, err error) {
	defer classify(&err)
	if !validUUID(p.RunID) {
		return store.SignalResult{}, fmt.Errorf("signal run %q: %w", p.RunID, store.ErrNotFound)
	}
	return s.signalOn(ctx, s.on("signal"), p)
}

// signalOn is Signal on q: the pool, or a transaction of SignalWithStart's.
func (s *Store) signalOn(ctx context.Context, q querier, p store.SignalParams) (_ store.SignalResult, err error) {
	b := &pgx.Batch{}
	b.Queue(s.q("lock_run"), p.TenantID, p.RunID)
	b.Queue(s.q("signal"), p.TenantID, p.RunID, p.Event, jsonOrNull(p.Payload), p.MaxBuffered, s.wakeChannel, nullIfEmpty(p.SignalID))
	var (
		status          string
		delivered, kept bool
		pending         int
		earlier         *bool
	)
	err = func() (err error) {
		br := q.SendBatch(ctx, b)
		defer func() {
			if cerr := br.Close(); err == nil && cerr != nil {
				err = cerr
			}
		}()
		if err := br.QueryRow().Scan(&status); err != nil {
			return notFound(err)
		}
		return br.QueryRow().Scan(&delivered, &kept, &pending, &earlier)
	}()
	switch {
	case err != nil:
		return store.SignalResult{}, fmt.Errorf("signal run %s: %w", p.RunID, err)
	case earlier != nil:
		return store.SignalResult{Delivered: *earlier, Duplicate: true}, nil
	case store.RunStatus(status).Terminal():
		return store.SignalResult{}, fmt.Errorf("signal run %s: %w: the run is already %s", p.RunID, store.ErrConflict, status)
	case !delivered && !kept:
		return store.SignalResult{}, fmt.Errorf("signal run %s: %w: the run already keeps %d events that no wait has consumed", p.RunID, store.ErrLimit, pending)
	}
	return store.SignalResult{Delivered: delivered}, nil
}

// SignalWithStart finds the run the key names, or creates it, and signals it, in one
// transaction. See store.Store.
func (s *Store) SignalWithStart(ctx context.Context, n store.NewRun, sig store.SignalParams) (_ store.SignalWithStartResult, err error) {
	defer classify(&err)
	if n.IdempotencyKey == "" {
		return store.SignalWithStartResult{}, errors.New("signal with start: the run has no idempotency key")
	}
	var res store.SignalWithStartResult
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		res = store.SignalWithStartResult{}
		// A plain start or another signal-with-start can take the key between the lock and
		// the insert (the insert then returns no row, after waiting for the other to commit):
		// the next round finds that run.
		for range 3 {
			run, err := scanRun(tx.QueryRow(ctx, s.q("lock_run_by_key"), n.TenantID, n.Workflow, n.IdempotencyKey))
			switch {
			case err == nil && !run.Status.Terminal():
				res.Run = run
			case err == nil:
				if _, err := tx.Exec(ctx, s.q("release_run_key"), run.ID, n.IdempotencyKey); err != nil {
					return err
				}
			case !errors.Is(err, pgx.ErrNoRows):
				return err
			}
			if res.Run.ID == "" {
				// Under its workflow's flow control, but never debounced: the key names this run.
				run, _, err := s.startRun(ctx, tx, n, startHow{noDebounce: true})
				if errors.Is(err, pgx.ErrNoRows) {
					continue
				}
				if err != nil {
					return err
				}
				res.Run, res.Created = run, true
			}
			sig.TenantID, sig.RunID = n.TenantID, res.Run.ID
			res.Signal, err = s.signalOn(ctx, tx, sig)
			return err
		}
		return fmt.Errorf("%w: the idempotency key %q kept changing hands", store.ErrConflict, n.IdempotencyKey)
	})
	if err != nil {
		return store.SignalWithStartResult{}, fmt.Errorf("signal with start %s: %w", n.Workflow, err)
	}
	return res, nil
}

// Broadcast keeps the event, resolves every waiting run of the tenant it matches and creates
// the runs it triggers, in one transaction: one round trip for the event itself and one per
// triggered run.
func (s *Store) Broadcast(ctx context.Context, p store.BroadcastParams) (_ store.BroadcastResult, err error) {
	defer classify(&err)
	var res store.BroadcastResult
	// A batch is one implicit transaction: without runs to start, the event costs one round
	// trip. Starting runs needs the event's outcome first, so that takes a real transaction.
	run := func(fn func(tx pgx.Tx) error) error { return fn(nil) }
	if len(p.Start) > 0 {
		run = func(fn func(tx pgx.Tx) error) error { return pgx.BeginFunc(ctx, s.pool, fn) }
	}
	err = run(func(tx pgx.Tx) error {
		var q querier = s.pool
		if tx != nil {
			q = tx
		}
		b := &pgx.Batch{}
		b.Queue(s.q("lock_broadcast_event"), p.TenantID, p.Event, s.schema)
		b.Queue(s.q("broadcast"), p.TenantID, p.Event, jsonOrNull(p.Payload), s.wakeChannel, nullIfEmpty(p.EventID))
		var kept bool
		err := func() (err error) {
			br := q.SendBatch(ctx, b)
			defer func() {
				if cerr := br.Close(); err == nil && cerr != nil {
					err = cerr
				}
			}()
			if _, err := br.Exec(); err != nil {
				return err
			}
			var notified int
			return br.QueryRow().Scan(&res.Resolved, &notified, &kept, &res.ResolvedRuns)
		}()
		if err != nil {
			return err
		}
		res.Duplicate = !kept
		for _, n := range p.Start {
			var run store.Run
			switch {
			case res.Duplicate && n.IdempotencyKey == "":
				continue // nothing would find this run again; a duplicate must not start it twice
			case res.Duplicate:
				run, err = scanRun(q.QueryRow(ctx, s.q("get_run_by_key"), n.TenantID, n.Workflow, n.IdempotencyKey))
			default:
				// A triggered start obeys its workflow's whole flow control, debounce included
				// (a burst of events becomes one run); an event whose payload names no key of
				// it starts nothing of that workflow, as the workflow's own API start would be
				// refused.
				run, _, err = s.startRun(ctx, tx, n, startHow{})
				if errors.Is(err, abi.ErrFlowKey) {
					continue
				}
				if errors.Is(err, pgx.ErrNoRows) && n.IdempotencyKey != "" {
					// A run started by hand with the same key: that run is the one this event
					// stands for.
					run, err = scanRun(q.QueryRow(ctx, s.q("get_run_by_key"), n.TenantID, n.Workflow, n.IdempotencyKey))
				}
			}
			if errors.Is(err, pgx.ErrNoRows) {
				continue // the run the first sending started has been swept since
			}
			if err != nil {
				return fmt.Errorf("start %s: %w", n.Workflow, err)
			}
			res.Started = append(res.Started, run)
		}
		return nil
	})
	if err != nil {
		return store.BroadcastResult{}, fmt.Errorf("broadcast %s: %w", p.Event, err)
	}
	return res, nil
}

// TriggeredBy returns the workflows whose latest version declares event as a trigger.
func (s *Store) TriggeredBy(ctx context.Context, tenantID, event string) (_ []store.Workflow, err error) {
	defer classify(&err)
	rows, err := s.pool.Query(ctx, s.q("triggered_by"), tenantID, event)
	if err != nil {
		return nil, fmt.Errorf("workflows triggered by %s: %w", event, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Workflow, error) { return scanWorkflow(r) })
	if err != nil {
		return nil, fmt.Errorf("workflows triggered by %s: %w", event, err)
	}
	return out, nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// querier is what a pool and a transaction share.
type querier interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
