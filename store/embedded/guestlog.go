package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/wfhost/wfhost/store"
)

// guestLine is a guest log line as append_guest_log.sql reads it and the run_log row's detail
// keeps it (without at).
type guestLine struct {
	At      int64  `json:"at,omitempty"`
	Level   string `json:"level"`
	Message string `json:"message"`
	Stream  string `json:"stream,omitempty"`
	Step    string `json:"step,omitempty"`
}

// AppendGuestLog keeps the lines as far as the run's bounds leave room: one statement, in
// the writer's group commit.
func (s *Store) AppendGuestLog(ctx context.Context, tenantID, runID string, lines []store.GuestLogLine) (kept int, err error) {
	defer classify(&err)
	if len(lines) == 0 {
		return 0, nil
	}
	err = s.write(ctx, "append guest log", func(w *wtx) error {
		var status string
		if err := w.queryRow("run_status", tenantID, runID).Scan(&status); err != nil {
			return notFound(err)
		}
		kept, err = w.keepGuestLog(tenantID, runID, lines)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("append guest log of run %q: %w", runID, err)
	}
	return kept, nil
}

// keepGuestLog keeps lines in the run's guest log as far as its bounds leave room, in the
// write w: AppendGuestLog's, or a run's end (finish), which keeps the lines of the activation
// that ends it in its own transaction.
func (w *wtx) keepGuestLog(tenantID, runID string, lines []store.GuestLogLine) (int, error) {
	if len(lines) == 0 {
		return 0, nil
	}
	in := make([]guestLine, len(lines))
	for i, l := range lines {
		in[i] = guestLine{At: micros(l.At), Level: l.Level, Message: l.Message, Stream: l.Stream, Step: l.Step}
	}
	doc, err := json.Marshal(in)
	if err != nil {
		return 0, fmt.Errorf("guest log lines: %w", err)
	}
	n, err := w.affected("append_guest_log", tenantID, runID, string(doc), store.MaxGuestLogLines, store.MaxGuestLogBytes)
	return int(n), err
}

// ListGuestLog returns a page of a run's guest log, in one read transaction with the check
// that the run exists.
func (s *Store) ListGuestLog(ctx context.Context, tenantID, runID string, after int64, limit int) (_ []store.GuestLogLine, err error) {
	defer classify(&err)
	if limit < 1 || limit > store.MaxLogPage {
		return nil, fmt.Errorf("list guest log of run %s: limit %d is not from 1 to %d", runID, limit, store.MaxLogPage)
	}
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("list guest log of run %s: %w", runID, err)
	}
	defer func() { _ = tx.Rollback() }()
	var status string
	if err := tx.QueryRowContext(ctx, s.q("run_status"), tenantID, runID).Scan(&status); err != nil {
		return nil, fmt.Errorf("list guest log of run %q: %w", runID, notFound(err))
	}
	rows, err := tx.QueryContext(ctx, s.q("list_guest_log"), tenantID, runID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list guest log of run %s: %w", runID, err)
	}
	out, err := collect(rows, func(r scanner) (store.GuestLogLine, error) {
		var (
			l      store.GuestLogLine
			at     int64
			detail string
			g      guestLine
		)
		if err := r.Scan(&l.Seq, &at, &detail); err != nil {
			return l, err
		}
		if err := json.Unmarshal([]byte(detail), &g); err != nil {
			return l, err
		}
		l.At, l.Level, l.Message, l.Stream, l.Step = fromMicros(at), g.Level, g.Message, g.Stream, g.Step
		return l, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list guest log of run %s: %w", runID, err)
	}
	return out, nil
}
