package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wfhost/wfhost/store"
)

// Signal sends an event to one run. See store.Store.
func (s *Store) Signal(ctx context.Context, tenantID, runID, event string, payload json.RawMessage, maxBuffered int) (_ bool, err error) {
	defer classify(&err)
	body, err := jsonOrNull(payload)
	if err != nil {
		return false, fmt.Errorf("signal run %s: payload: %w", runID, err)
	}
	var delivered bool
	err = s.write(ctx, "signal run "+runID, func(w *wtx) error {
		delivered = false
		var status string
		if err := w.queryRow("run_status", tenantID, runID).Scan(&status); err != nil {
			return notFound(err)
		}
		if store.RunStatus(status).Terminal() {
			return fmt.Errorf("%w: the run is already %s", store.ErrConflict, status)
		}
		// The run's first waiting step (by seq) on this event whose match the payload contains.
		rows, err := w.query("waiting_steps_of_run", runID, event)
		if err != nil {
			return err
		}
		key, found, err := firstMatching(rows, body)
		if err != nil {
			return err
		}
		if found {
			if _, err := w.exec("deliver_signal", runID, key, body, micros(w.now)); err != nil {
				return err
			}
			if _, err := w.exec("wake_run", runID, micros(w.now)); err != nil {
				return err
			}
			delivered = true
			w.wake()
			return nil
		}
		var pending int
		if err := w.queryRow("count_run_events", runID).Scan(&pending); err != nil {
			return err
		}
		if pending >= maxBuffered {
			return fmt.Errorf("%w: the run already keeps %d events that no wait has consumed", store.ErrLimit, pending)
		}
		_, err = w.exec("keep_event", tenantID, runID, event, body, micros(w.now), nil)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("signal run %s: %w", runID, err)
	}
	return delivered, nil
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
			n, err := w.resolveWaiting(p.TenantID, p.Event, body, id)
			if err != nil {
				return err
			}
			res.Resolved = n
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
				// event stands for.
				run, _, err = w.createRun(n)
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
func (w *wtx) resolveWaiting(tenant, event, payload string, eventID int64) (int, error) {
	rows, err := w.query("waiting_steps_of_tenant", tenant, event)
	if err != nil {
		return 0, err
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
			return 0, err
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
		return 0, err
	}
	woken := map[string]bool{}
	for _, t := range targets {
		if _, err := w.exec("resolve_wait", t.run, t.key, payload, eventID, micros(w.now)); err != nil {
			return 0, err
		}
		if !woken[t.run] {
			if _, err := w.exec("wake_run", t.run, micros(w.now)); err != nil {
				return 0, err
			}
			woken[t.run] = true
		}
	}
	if len(woken) > 0 {
		w.wake()
	}
	return len(woken), nil
}
