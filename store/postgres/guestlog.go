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

// guestLine is a guest log line as append_guest_log.sql reads it and the run_log row's detail
// keeps it (without at).
type guestLine struct {
	At      *time.Time `json:"at,omitempty"`
	Level   string     `json:"level"`
	Message string     `json:"message"`
	Stream  string     `json:"stream,omitempty"`
	Step    string     `json:"step,omitempty"`
}

// AppendGuestLog keeps the lines as far as the run's bounds leave room: one statement.
func (s *Store) AppendGuestLog(ctx context.Context, tenantID, runID string, lines []store.GuestLogLine) (kept int, err error) {
	defer classify(&err)
	if !validUUID(runID) {
		return 0, fmt.Errorf("append guest log of run %q: %w", runID, store.ErrNotFound)
	}
	if len(lines) == 0 {
		return 0, nil
	}
	doc, err := guestLogDoc(lines)
	if err != nil {
		return 0, fmt.Errorf("append guest log of run %s: %w", runID, err)
	}
	var n int64
	err = s.pool.QueryRow(ctx, s.q("append_guest_log"), tenantID, runID, doc, store.MaxGuestLogLines, store.MaxGuestLogBytes).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("append guest log of run %q: %w", runID, store.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("append guest log of run %s: %w", runID, err)
	}
	return int(n), nil
}

// guestLogDoc is lines as guest_log_rows (migration 027) reads them: a JSON array, nil (SQL
// NULL) for none.
func guestLogDoc(lines []store.GuestLogLine) ([]byte, error) {
	if len(lines) == 0 {
		return nil, nil
	}
	in := make([]guestLine, len(lines))
	for i, l := range lines {
		at := l.At.UTC()
		in[i] = guestLine{At: &at, Level: l.Level, Message: l.Message, Stream: l.Stream, Step: l.Step}
	}
	doc, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("guest log lines: %w", err)
	}
	return doc, nil
}

// ListGuestLog returns a page of a run's guest log, batched after run_status as the lifecycle
// log's page is.
func (s *Store) ListGuestLog(ctx context.Context, tenantID, runID string, after int64, limit int) (_ []store.GuestLogLine, err error) {
	defer classify(&err)
	if !validUUID(runID) {
		return nil, fmt.Errorf("list guest log of run %q: %w", runID, store.ErrNotFound)
	}
	if limit < 1 || limit > store.MaxLogPage {
		return nil, fmt.Errorf("list guest log of run %s: limit %d is not from 1 to %d", runID, limit, store.MaxLogPage)
	}
	out, err := ofKnownRun(ctx, s, tenantID, runID, s.q("list_guest_log"), []any{tenantID, runID, after, limit},
		func(r pgx.CollectableRow) (store.GuestLogLine, error) {
			var (
				l      store.GuestLogLine
				detail []byte
				g      guestLine
			)
			if err := r.Scan(&l.Seq, &l.At, &detail); err != nil {
				return l, err
			}
			if err := json.Unmarshal(detail, &g); err != nil {
				return l, err
			}
			l.At, l.Level, l.Message, l.Stream, l.Step = l.At.UTC(), g.Level, g.Message, g.Stream, g.Step
			return l, nil
		})
	if err != nil {
		return nil, fmt.Errorf("list guest log of run %s: %w", runID, err)
	}
	return out, nil
}
