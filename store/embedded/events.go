package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// Signal sends an event to one run. See store.Store.
func (s *Store) Signal(ctx context.Context, p store.SignalParams) (_ store.SignalResult, err error) {
	defer classify(&err)
	body, err := jsonOrNull(p.Payload)
	if err != nil {
		return store.SignalResult{}, fmt.Errorf("signal run %s: payload: %w", p.RunID, err)
	}
	var res store.SignalResult
	err = s.write(ctx, "signal run "+p.RunID, func(w *wtx) error {
		res = store.SignalResult{}
		return s.signalIn(w, p, body, &res)
	})
	if err != nil {
		return store.SignalResult{}, fmt.Errorf("signal run %s: %w", p.RunID, err)
	}
	return res, nil
}

// SignalWithStart finds the run the key names, or creates it, and signals it, in one write.
// See store.Store.
func (s *Store) SignalWithStart(ctx context.Context, n store.NewRun, sig store.SignalParams) (_ store.SignalWithStartResult, err error) {
	defer classify(&err)
	if n.IdempotencyKey == "" {
		return store.SignalWithStartResult{}, errors.New("signal with start: the run has no idempotency key")
	}
	body, err := jsonOrNull(sig.Payload)
	if err != nil {
		return store.SignalWithStartResult{}, fmt.Errorf("signal with start %s: payload: %w", n.Workflow, err)
	}
	var res store.SignalWithStartResult
	err = s.write(ctx, "signal with start "+n.Workflow, func(w *wtx) error {
		res = store.SignalWithStartResult{}
		run, found, err := w.runByKey(n)
		if err != nil {
			return err
		}
		if found && run.Status.Terminal() {
			if _, err := w.exec("release_run_key", run.ID, n.IdempotencyKey); err != nil {
				return err
			}
		}
		if !found || run.Status.Terminal() {
			// Under its workflow's flow control, but never debounced: the key names this run.
			if run, res.Created, err = w.startRun(n, startHow{noDebounce: true}); err != nil {
				return err
			}
		}
		res.Run = run
		sig.TenantID, sig.RunID = n.TenantID, run.ID
		return s.signalIn(w, sig, body, &res.Signal)
	})
	if err != nil {
		return store.SignalWithStartResult{}, fmt.Errorf("signal with start %s: %w", n.Workflow, err)
	}
	return res, nil
}

// signalIn is Signal within the write w: Signal's own, or SignalWithStart's.
func (s *Store) signalIn(w *wtx, p store.SignalParams, body string, res *store.SignalResult) error {
	var status string
	if err := w.queryRow("run_status", p.TenantID, p.RunID).Scan(&status); err != nil {
		return notFound(err)
	}
	if p.SignalID != "" {
		err := w.queryRow("signal_id", p.RunID, p.SignalID).Scan(&res.Delivered)
		if err == nil {
			res.Duplicate = true
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	if store.RunStatus(status).Terminal() {
		return fmt.Errorf("%w: the run is already %s", store.ErrConflict, status)
	}
	if err := s.deliverOrKeep(w, p, body, res); err != nil {
		return err
	}
	if p.SignalID != "" {
		_, err := w.exec("record_signal_id", p.RunID, p.SignalID, res.Delivered)
		return err
	}
	return nil
}

// deliverOrKeep resolves the run's first waiting step (by seq) on the event whose match the
// payload contains, or keeps the event for the run within p.MaxBuffered.
func (s *Store) deliverOrKeep(w *wtx, p store.SignalParams, body string, res *store.SignalResult) error {
	rows, err := w.query("waiting_steps_of_run", p.RunID, p.Event)
	if err != nil {
		return err
	}
	key, found, err := firstMatching(rows, body)
	if err != nil {
		return err
	}
	if found {
		if _, err := w.exec("deliver_signal", p.RunID, key, body, micros(w.now)); err != nil {
			return err
		}
		if _, err := w.exec("wake_run", p.RunID, micros(w.now)); err != nil {
			return err
		}
		res.Delivered = true
		w.wake()
		return nil
	}
	var pending int
	if err := w.queryRow("count_run_events", p.RunID).Scan(&pending); err != nil {
		return err
	}
	if pending >= p.MaxBuffered {
		return fmt.Errorf("%w: the run already keeps %d events that no wait has consumed", store.ErrLimit, pending)
	}
	_, err = w.exec("keep_event", p.TenantID, p.RunID, p.Event, body, micros(w.now), nil)
	return err
}

// firstMatching returns the key of the first (key, match) row whose match payload contains
// (a NULL match takes everything), and closes rows.
func firstMatching(rows *sql.Rows, payload string) (string, bool, error) {
	defer rows.Close()
	for rows.Next() {
		var (
			key   string
			match sql.NullString
		)
		if err := rows.Scan(&key, &match); err != nil {
			return "", false, err
		}
		if !match.Valid {
			return key, true, nil
		}
		if ok, err := contains([]byte(payload), []byte(match.String)); err == nil && ok {
			return key, true, nil
		}
	}
	return "", false, rows.Err()
}

// Broadcast keeps the event, resolves every waiting run of the tenant it matches and creates
// the runs it triggers, in one transaction.
func (s *Store) Broadcast(ctx context.Context, p store.BroadcastParams) (_ store.BroadcastResult, err error) {
	defer classify(&err)
	body, err := jsonOrNull(p.Payload)
	if err != nil {
		return store.BroadcastResult{}, fmt.Errorf("broadcast %s: payload: %w", p.Event, err)
	}
	var res store.BroadcastResult
	err = s.write(ctx, "broadcast "+p.Event, func(w *wtx) error {
		res = store.BroadcastResult{}
		if p.EventID != "" {
			var one int
			switch err := w.queryRow("event_key_exists", p.TenantID, p.Event, p.EventID).Scan(&one); {
			case err == nil:
				res.Duplicate = true
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
		}
		if !res.Duplicate {
			var id int64
			if err := w.queryRow("keep_event", p.TenantID, nil, p.Event, body, micros(w.now), nullIfEmpty(p.EventID)).Scan(&id); err != nil {
				return err
			}
			ids, err := w.resolveWaiting(p.TenantID, p.Event, body, id)
			if err != nil {
				return err
			}
			res.Resolved, res.ResolvedRuns = len(ids), ids
		}
		for _, n := range p.Start {
			var (
				run store.Run
				err error
			)
			switch {
			case res.Duplicate && n.IdempotencyKey == "":
				continue // nothing would find this run again; a duplicate must not start it twice
			case res.Duplicate:
				run, err = scanRun(w.queryRow("get_run_by_key", n.TenantID, n.Workflow, n.IdempotencyKey))
				if errors.Is(err, sql.ErrNoRows) {
					continue // the run the first sending started has been swept since
				}
			default:
				// With a key a run started by hand already holds, that run is the one this
				// event stands for. A triggered start obeys its workflow's whole flow control,
				// debounce included; an event whose payload names no key of it starts nothing
				// of that workflow.
				run, _, err = w.startRun(n, startHow{})
				if errors.Is(err, abi.ErrFlowKey) {
					continue
				}
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

// resolveWaiting completes every waiting step of the tenant's running runs on event whose
// match payload contains, wakes their runs, and returns how many runs it resolved.
func (w *wtx) resolveWaiting(tenant, event, payload string, eventID int64) ([]string, error) {
	rows, err := w.query("waiting_steps_of_tenant", tenant, event)
	if err != nil {
		return nil, err
	}
	type target struct{ run, key string }
	var targets []target
	for rows.Next() {
		var (
			t     target
			match sql.NullString
		)
		if err := rows.Scan(&t.run, &t.key, &match); err != nil {
			rows.Close()
			return nil, err
		}
		if match.Valid {
			if ok, err := contains([]byte(payload), []byte(match.String)); err != nil || !ok {
				continue
			}
		}
		targets = append(targets, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	woken := map[string]bool{}
	var ids []string // the runs woken, in the order resolved
	for _, t := range targets {
		if _, err := w.exec("resolve_wait", t.run, t.key, payload, eventID, micros(w.now)); err != nil {
			return nil, err
		}
		if !woken[t.run] {
			if _, err := w.exec("wake_run", t.run, micros(w.now)); err != nil {
				return nil, err
			}
			woken[t.run] = true
			ids = append(ids, t.run)
		}
	}
	if len(woken) > 0 {
		w.wake()
	}
	return ids, nil
}
