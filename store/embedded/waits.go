package embedded

import (
	"context"
	"fmt"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// The wait methods need none of store/postgres's advisory locks: the writer runs one
// transaction at a time, so a wait and a signal or broadcast of the same event are always
// ordered, and whichever comes second sees what the first wrote.

// ReachWait resolves a newly reached wait from a kept event, or journals it as waiting and
// suspends the run. See store.Store for the rules.
func (s *Store) ReachWait(ctx context.Context, l store.Lease, st store.Step, leaseFor time.Duration) (_ *store.Step, err error) {
	defer classify(&err)
	var out *store.Step
	err = s.write(ctx, "reach wait "+st.Key, func(w *wtx) error {
		out = nil
		tenant, created, err := w.fenceGet(l)
		if err != nil {
			return err
		}
		match, err := matchArg(st.Match)
		if err != nil {
			return fmt.Errorf("match: %w", err)
		}
		var m *matcher
		if match != nil {
			mm, err := newMatcher(st.Match)
			if err != nil {
				return fmt.Errorf("match: %w", err)
			}
			m = &mm
		}
		// The oldest matching event signalled to the run, and the oldest matching broadcast
		// received since the run was created that it has not consumed yet: the older one wins.
		targetedID, targeted, err := w.firstMatch(m, "run_events", l.RunID, st.Event)
		if err != nil {
			return err
		}
		broadcastID, broadcast, err := w.firstMatch(m, "broadcast_events", tenant, st.Event, created, l.RunID)
		if err != nil {
			return err
		}
		var (
			eventID any
			payload any
		)
		switch {
		case targetedID != 0 && (broadcastID == 0 || targetedID < broadcastID):
			eventID, payload = targetedID, targeted
			if _, err := w.exec("delete_event", targetedID); err != nil {
				return err
			}
		case broadcastID != 0:
			eventID, payload = broadcastID, broadcast
		}
		status, completed := store.StepWaiting, any(nil)
		if eventID != nil {
			status, completed = store.StepCompleted, micros(st.StartedAt)
		}
		if _, err := w.exec("reach_wait", l.RunID, tenant, st.Seq, st.Key, string(status), payload, st.Attempt,
			timeArg(st.WakeAt), st.Event, match, eventID, micros(st.StartedAt), completed); err != nil {
			return err
		}
		row, err := w.holdOrPark(l, st.Key, st.WakeAt, leaseFor, true)
		if err != nil {
			return err
		}
		if row.Status != store.StepWaiting {
			out = &row
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reach wait %s: %w", st.Key, err)
	}
	return out, nil
}

// firstMatch returns the id and payload of the first event the query returns whose payload
// contains m (every one when m is nil); id 0 when none does.
func (w *wtx) firstMatch(m *matcher, query string, args ...any) (int64, string, error) {
	rows, err := w.query(query, args...)
	if err != nil {
		return 0, "", err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id      int64
			payload string
		)
		if err := rows.Scan(&id, &payload); err != nil {
			return 0, "", err
		}
		if m == nil || m.match([]byte(payload)) {
			return id, payload, nil
		}
	}
	return 0, "", rows.Err()
}

// holdOrPark reads the run's step key after a fence has passed: a waiting step releases the
// lease and makes the run available at wakeAt (nil: only an event wakes it); a resolved one
// keeps and renews the lease (renew_lease.sql: journal progress). reached says the wait was
// journaled just now, which is progress however it stands. Returns the row.
func (w *wtx) holdOrPark(l store.Lease, key string, wakeAt *time.Time, leaseFor time.Duration, reached bool) (store.Step, error) {
	row, err := scanStep(w.queryRow("get_step", l.RunID, key))
	if err != nil {
		return store.Step{}, notFound(err)
	}
	if row.Status == store.StepWaiting {
		query := "suspend"
		if reached {
			query = "suspend_progressed"
		}
		_, err = w.exec(query, l.RunID, l.Epoch, timeArg(wakeAt), micros(w.now))
	} else {
		_, err = w.exec("renew_lease", l.RunID, l.Epoch, micros(w.now)+leaseFor.Microseconds(), micros(w.now))
	}
	return row, err
}

// ParkWait suspends on a waiting step unless an event resolved it meanwhile.
func (s *Store) ParkWait(ctx context.Context, l store.Lease, key string, wakeAt *time.Time, leaseFor time.Duration) (_ *store.Step, err error) {
	defer classify(&err)
	var out *store.Step
	err = s.write(ctx, "park wait "+key, func(w *wtx) error {
		out = nil
		if _, _, err := w.fenceGet(l); err != nil {
			return err
		}
		row, err := w.holdOrPark(l, key, wakeAt, leaseFor, false)
		if err != nil {
			return err
		}
		if row.Status != store.StepWaiting {
			out = &row
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("park wait %s: %w", key, err)
	}
	return out, nil
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

// endWait ends the waiting step key with status, output and errInfo (end_wait.sql) under the
// renewed lease, unless an event resolved it first, and returns the step as it then stands.
func (s *Store) endWait(ctx context.Context, l store.Lease, key, what string, leaseFor time.Duration, completedAt time.Time, status store.StepStatus, output, errInfo any) (store.Step, error) {
	var out store.Step
	err := s.write(ctx, what+" "+key, func(w *wtx) error {
		if _, err := w.fence("renew_lease", l.RunID, l.Epoch, micros(w.now)+leaseFor.Microseconds(), micros(w.now)); err != nil {
			return err
		}
		if _, err := w.exec("end_wait", l.RunID, key, micros(completedAt), string(status), output, errInfo); err != nil {
			return err
		}
		var err error
		out, err = scanStep(w.queryRow("get_step", l.RunID, key))
		return notFound(err)
	})
	if err != nil {
		return store.Step{}, fmt.Errorf("%s %s: %w", what, key, err)
	}
	return out, nil
}
