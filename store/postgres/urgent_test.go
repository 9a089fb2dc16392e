package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

// TestUrgentWritesDoNotQueueBehindBusyCommitters: with every committer stuck on a batch (here,
// two writes whose run rows another transaction holds), an ordinary write waits its turn
// behind them, and an urgent one (store.Urgent: a quiet tenant's) commits at once on its own
// lane (engine/fairness.go).
func TestUrgentWritesDoNotQueueBehindBusyCommitters(t *testing.T) {
	s, leases := leasedRuns(t, 2+committers)
	ctx := t.Context()
	stuck, ordinary, urgent := leases[:committers], leases[committers], leases[committers+1]

	// Hold the stuck runs' rows, so each committer that takes one of their writes waits.
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	for _, l := range stuck {
		if _, err := tx.Exec(ctx, "SELECT 1 FROM runs WHERE id = $1 FOR UPDATE", l.RunID); err != nil {
			t.Fatal(err)
		}
	}
	stuckDone := make(chan error, len(stuck))
	for _, l := range stuck {
		go func() { stuckDone <- s.CommitStep(ctx, l, stepFor(l, 0, "a"), time.Hour) }()
	}
	// Every committer is now waiting on a lock (so the ordinary write below has none).
	for waiting := 0; waiting < len(stuck); {
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ordinaryDone := make(chan error, 1)
	go func() { ordinaryDone <- s.CommitStep(ctx, ordinary, stepFor(ordinary, 0, "a"), time.Hour) }()

	uctx, cancel := context.WithTimeout(store.Urgent(ctx), time.Minute)
	defer cancel()
	if err := s.CommitStep(uctx, urgent, stepFor(urgent, 0, "a"), time.Hour); err != nil {
		t.Fatalf("the urgent write, with every committer busy: %v", err)
	}
	select {
	case err := <-ordinaryDone:
		t.Fatalf("the ordinary write went past the busy committers (err %v): it has no lane of its own", err)
	default:
	}

	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range stuck {
		if err := <-stuckDone; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-ordinaryDone; err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM steps").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want := len(leases); n != want {
		t.Fatalf("%d steps committed, want %d", n, want)
	}
}
