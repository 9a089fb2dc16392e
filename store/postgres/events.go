package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// Signal sends an event to one run: one round trip, one transaction. See store.Store.
func (s *Store) Signal(ctx context.Context, tenantID, runID, event string, payload json.RawMessage, maxBuffered int) (bool, error) {
	if !validUUID(runID) {
		return false, fmt.Errorf("signal run %q: %w", runID, store.ErrNotFound)
	}
	b := &pgx.Batch{}
	b.Queue(s.q("lock_run"), tenantID, runID)
	b.Queue(s.q("signal"), tenantID, runID, event, jsonOrNull(payload), maxBuffered, s.wakeChannel)
	var (
		status          string
		delivered, kept bool
		pending         int
	)
	err := func() (err error) {
		br := s.pool.SendBatch(ctx, b)
		defer func() {
			if cerr := br.Close(); err == nil && cerr != nil {
				err = cerr
			}
		}()
		if err := br.QueryRow().Scan(&status); err != nil {
			return notFound(err)
		}
		return br.QueryRow().Scan(&delivered, &kept, &pending)
	}()
	switch {
	case err != nil:
		return false, fmt.Errorf("signal run %s: %w", runID, err)
	case store.RunStatus(status).Terminal():
		return false, fmt.Errorf("signal run %s: %w: the run is already %s", runID, store.ErrConflict, status)
	case !delivered && !kept:
		return false, fmt.Errorf("signal run %s: %w: the run already keeps %d events that no wait has consumed", runID, store.ErrLimit, pending)
	}
	return delivered, nil
}

// Broadcast keeps the event and resolves every waiting run of the tenant it matches: one round
// trip, one transaction.
func (s *Store) Broadcast(ctx context.Context, tenantID, event string, payload json.RawMessage) (int, error) {
	b := &pgx.Batch{}
	b.Queue(s.q("lock_broadcast_event"), tenantID, event, s.schema)
	b.Queue(s.q("broadcast"), tenantID, event, jsonOrNull(payload), s.wakeChannel)
	var resolved, notified int
	err := func() (err error) {
		br := s.pool.SendBatch(ctx, b)
		defer func() {
			if cerr := br.Close(); err == nil && cerr != nil {
				err = cerr
			}
		}()
		if _, err := br.Exec(); err != nil {
			return err
		}
		return br.QueryRow().Scan(&resolved, &notified)
	}()
	if err != nil {
		return 0, fmt.Errorf("broadcast %s: %w", event, err)
	}
	return resolved, nil
}
