package embedded

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// TestSweepLeavesNoRows looks under the API: a swept run's journal, buffered events and
// outbound records are gone from their tables (foreign keys cascade only when enabled on the
// writer's connection, which this proves), while another run's rows stay.
func TestSweepLeavesNoRows(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	// The store's clock is a fake, so the runs' retention passes when the test says, not after
	// a sleep.
	clk := clock.NewFake(time.Now())
	s, err := Open(ctx, Config{Dir: t.TempDir(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.EnsureTenant(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	mk := func(retention int) store.Run {
		r, _, err := s.CreateRun(ctx, store.NewRun{TenantID: "t", Workflow: "w", Version: "1", Digest: "d", Input: json.RawMessage(`{}`), RetentionDays: retention})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	gone, kept := mk(0), mk(9)
	claims, err := s.ClaimRuns(ctx, store.ClaimParams{Owner: "test", Limit: 2, LeaseFor: time.Hour})
	if err != nil || len(claims) != 2 {
		t.Fatalf("claim: %v, %d claims", err, len(claims))
	}
	for _, c := range claims {
		if _, err := s.Signal(ctx, store.SignalParams{TenantID: "t", RunID: c.Run.ID, Event: "e", Payload: json.RawMessage(`{}`), MaxBuffered: 10}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordOutbound(ctx, store.OutboundRecord{TenantID: "t", RunID: c.Run.ID, Step: "s", Method: "GET", Host: "h", Path: "/", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		if err := s.CommitAndFinish(ctx, c.Lease, store.Step{RunID: c.Run.ID, Key: "s", Kind: store.KindRun, Status: store.StepCompleted,
			Attempt: 1, StartedAt: now, CompletedAt: &now}, store.StatusCompleted, json.RawMessage(`1`), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Millisecond)
	if n, err := s.SweepExpired(ctx, 10); err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	for _, table := range []string{"steps", "events", "outbound"} {
		for id, want := range map[string]int{gone.ID: 0, kept.ID: 1} {
			var n int
			if err := s.rdb.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE run_id = ?", id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != want {
				t.Errorf("%s rows of run %s: %d, want %d", table, id, n, want)
			}
		}
	}
}
