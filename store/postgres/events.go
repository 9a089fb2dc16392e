package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// ReachWait resolves a newly reached wait from a kept event, or journals it as waiting and
// suspends the run. See store.Store for the rules.
func (s *Store) ReachWait(ctx context.Context, l store.Lease, st store.Step, leaseFor time.Duration) (*store.Step, error) {
	var resolved *store.Step
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		resolved = nil
		var (
			tenant  string
			created time.Time
		)
		// The event lock comes before the run lock: Broadcast takes them in that order too, so the
		// two can never wait on each other.
		if err := s.eventLock(ctx, tx, l.RunID, st.Event, false); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, s.q("fence_lock"), l.RunID, l.Epoch).Scan(&tenant, &created); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return store.ErrLeaseLost
			}
			return err
		}
		var (
			eventID  int64
			targeted bool
			payload  []byte
		)
		err := tx.QueryRow(ctx, s.q("find_event"), tenant, st.Event, matchArg(st.Match), l.RunID, created).Scan(&eventID, &targeted, &payload)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			st.Status = store.StepWaiting
			if _, err := tx.Exec(ctx, s.q("insert_step"), insertArgs(l.RunID, tenant, st)...); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, s.q("park_run"), l.RunID, st.WakeAt)
			return err
		case err != nil:
			return err
		}
		if targeted {
			if _, err := tx.Exec(ctx, s.q("delete_event"), eventID); err != nil {
				return err
			}
		}
		done := st.StartedAt
		st.Status, st.Output, st.EventID, st.CompletedAt = store.StepCompleted, json.RawMessage(payload), &eventID, &done
		if _, err := tx.Exec(ctx, s.q("insert_step"), insertArgs(l.RunID, tenant, st)...); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.q("renew_lease"), l.RunID, millis(leaseFor)); err != nil {
			return err
		}
		row := st
		resolved = &row
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reach wait %s: %w", st.Key, err)
	}
	return resolved, nil
}

// eventLock takes the advisory lock that serializes waits and broadcasts of one event name.
// The tenant is looked up from the run when not given, so callers need not carry it.
func (s *Store) eventLock(ctx context.Context, tx pgx.Tx, runID, event string, exclusive bool) error {
	var tenant string
	if err := tx.QueryRow(ctx, "SELECT tenant_id FROM runs WHERE id = $1", runID).Scan(&tenant); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrLeaseLost
		}
		return err
	}
	_, err := tx.Exec(ctx, s.q("event_lock"), tenant, event, exclusive)
	return err
}

func insertArgs(runID, tenant string, st store.Step) []any {
	return []any{runID, tenant, st.Seq, st.Key, string(st.Kind), string(st.Status), jsonArg(st.Output), errorArg(st.Error),
		st.Attempt, st.WakeAt, st.Event, matchArg(st.Match), st.EventID, st.StartedAt, st.CompletedAt}
}

// ParkWait suspends on a waiting step unless an event resolved it meanwhile.
func (s *Store) ParkWait(ctx context.Context, l store.Lease, key string, wakeAt *time.Time, leaseFor time.Duration) (*store.Step, error) {
	var resolved *store.Step
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		resolved = nil
		var (
			tenant  string
			created time.Time
		)
		// Signal and Broadcast lock the run row before they resolve a step; holding it here
		// means the read below sees whatever they committed.
		if err := tx.QueryRow(ctx, s.q("fence_lock"), l.RunID, l.Epoch).Scan(&tenant, &created); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return store.ErrLeaseLost
			}
			return err
		}
		row, err := scanStep(tx.QueryRow(ctx, s.q("get_step"), l.RunID, key))
		if err != nil {
			return err
		}
		if row.Status != store.StepWaiting {
			resolved = &row
			_, err := tx.Exec(ctx, s.q("renew_lease"), l.RunID, millis(leaseFor))
			return err
		}
		_, err = tx.Exec(ctx, s.q("park_run"), l.RunID, wakeAt)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("park wait %s: %w", key, err)
	}
	return resolved, nil
}

// TimeoutWait times a waiting step out unless an event resolved it first.
func (s *Store) TimeoutWait(ctx context.Context, l store.Lease, key string, completedAt time.Time, leaseFor time.Duration) (store.Step, error) {
	var out store.Step
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var (
			tenant  string
			created time.Time
		)
		// Locking the run row serializes with Signal and Broadcast, which lock it too.
		if err := tx.QueryRow(ctx, s.q("fence_lock"), l.RunID, l.Epoch).Scan(&tenant, &created); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return store.ErrLeaseLost
			}
			return err
		}
		if _, err := tx.Exec(ctx, s.q("time_out_wait"), l.RunID, key, completedAt); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.q("renew_lease"), l.RunID, millis(leaseFor)); err != nil {
			return err
		}
		var err error
		out, err = scanStep(tx.QueryRow(ctx, s.q("get_step"), l.RunID, key))
		return err
	})
	if err != nil {
		return store.Step{}, fmt.Errorf("time out wait %s: %w", key, err)
	}
	return out, nil
}

// Signal sends an event to one run. See store.Store.
func (s *Store) Signal(ctx context.Context, tenantID, runID, event string, payload json.RawMessage, maxBuffered int) (bool, error) {
	if !validUUID(runID) {
		return false, fmt.Errorf("signal run %q: %w", runID, store.ErrNotFound)
	}
	delivered := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		delivered = false
		var status string
		if err := tx.QueryRow(ctx, s.q("lock_run"), tenantID, runID).Scan(&status); err != nil {
			return notFound(err)
		}
		if store.RunStatus(status).Terminal() {
			return fmt.Errorf("%w: the run is already %s", store.ErrConflict, status)
		}
		var key string
		err := tx.QueryRow(ctx, s.q("deliver_signal"), runID, event, string(payload)).Scan(&key)
		if err == nil {
			delivered = true
			if _, err := tx.Exec(ctx, s.q("wake_run"), runID); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, s.q("notify"), s.wakeChannel, "")
			return err
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, s.q("count_buffered"), runID).Scan(&n); err != nil {
			return err
		}
		if n >= maxBuffered {
			return fmt.Errorf("%w: the run already has %d events waiting to be consumed", store.ErrLimit, n)
		}
		_, err = tx.Exec(ctx, s.q("buffer_event"), tenantID, runID, event, string(payload))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("signal run %s: %w", runID, err)
	}
	return delivered, nil
}

// Broadcast keeps the event and resolves every waiting run of the tenant it matches.
func (s *Store) Broadcast(ctx context.Context, tenantID, event string, payload json.RawMessage) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.q("event_lock"), tenantID, event, true); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, s.q("broadcast"), tenantID, event, string(payload)).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			_, err := tx.Exec(ctx, s.q("notify"), s.wakeChannel, "")
			return err
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("broadcast %s: %w", event, err)
	}
	return n, nil
}

// Listen delivers wake and cancel notices from a dedicated connection until ctx ends or the
// connection fails.
func (s *Store) Listen(ctx context.Context, notices chan<- store.Notice) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, ch := range []string{s.wakeChannel, s.cancelChannel} {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return fmt.Errorf("listen: %w", err)
		}
	}
	// Notices sent before LISTEN took effect are lost; this one tells the caller to look.
	select {
	case notices <- store.Notice{Kind: store.NoticeWake}:
	case <-ctx.Done():
		return nil
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("listen: %w", err)
		}
		notice := store.Notice{Kind: store.NoticeWake}
		if n.Channel == s.cancelChannel {
			notice = store.Notice{Kind: store.NoticeCancel, RunID: n.Payload}
		}
		select {
		case notices <- notice:
		case <-ctx.Done():
			return nil
		}
	}
}
