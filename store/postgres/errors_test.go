package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// TestUnreachableIsUnavailable: every kind of call to a database that cannot be reached
// (nothing listens on the port) fails with store.ErrUnavailable, which the API answers with 503
// and the engine retries, never with an error its callers cannot tell apart from a bug.
func TestUnreachableIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, Config{URL: "postgres://postgres@127.0.0.1:1/test?connect_timeout=2", Schema: "unreachable"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := store.Lease{RunID: "00000000-0000-0000-0000-000000000001", Epoch: 1}
	calls := map[string]error{
		"read": func() error { _, err := s.GetRun(ctx, "t", l.RunID); return err }(),
		"claim": func() error {
			_, err := s.ClaimRuns(ctx, store.ClaimParams{Owner: "h", Limit: 1, LeaseFor: time.Second})
			return err
		}(),
		"fenced": s.CommitStep(ctx, l, stepFor(l, 0, "a"), time.Second),
		"batch": func() error {
			_, err := s.ReachWait(ctx, l, store.Step{RunID: l.RunID, Key: "w", Kind: store.KindWait}, time.Second)
			return err
		}(),
		"transaction": func() error {
			_, err := s.PutModule(ctx, store.Module{TenantID: "t", Digest: "d"}, nil, false)
			return err
		}(),
		"heartbeat": func() error { _, err := s.ExtendLeases(ctx, []store.Lease{l}, time.Second); return err }(),
	}
	for what, err := range calls {
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s: got %v, want store.ErrUnavailable", what, err)
		}
	}
}

// TestDroppedConnectionIsUnavailable: when Postgres ends the store's connection (a restart, an
// administrator, a failover), the call that meets the dead connection fails with
// store.ErrUnavailable or succeeds on a new one, and the next call succeeds.
func TestDroppedConnectionIsUnavailable(t *testing.T) {
	t.Parallel()
	s := freshStore(t, 1)
	ctx := t.Context()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureTenant(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, s.pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	var killed int
	if err := admin.QueryRow(ctx, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", s.appName).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminate the store's connection: %v (%d)", err, killed)
	}
	_, err = s.GetTenant(ctx, "t")
	if err != nil && !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("the call on a terminated connection: got %v, want store.ErrUnavailable", err)
	}
	t.Logf("the call on the terminated connection: %v", err)
	if _, err := s.GetTenant(ctx, "t"); err != nil {
		t.Fatalf("the next call: %v", err)
	}
}
