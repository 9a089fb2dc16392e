package postgres

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wfhost/wfhost/store"
)

// countingConn counts the client's writes. pgx sends each query, or each batch, with one
// write and then waits for the answer, so writes are round trips.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// roundTrips opens a one-connection store on a fresh schema whose writes are counted.
func roundTrips(t *testing.T) (*Store, *atomic.Int64) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	url := cmp.Or(os.Getenv("TEST_DATABASE_URL"), "postgres://postgres@127.0.0.1:5432/test")
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "wfhost_test_" + hex.EncodeToString(b[:])
	writes := &atomic.Int64{}
	s, err := open(t.Context(), Config{URL: url, Schema: schema, MaxConns: 1}, func(c *pgxpool.Config) {
		dialer := &net.Dialer{}
		c.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dialer.DialContext(ctx, network, addr)
			return countingConn{conn, writes}, err
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			_ = conn.Close(ctx)
		}
	})
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s, writes
}

// TestRoundTrips pins how many round trips the hot operations cost once the connection's
// statement cache is warm (the first use of each statement prepares it: one more).
func TestRoundTrips(t *testing.T) {
	t.Parallel()
	s, writes := roundTrips(t)
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.EnsureTenant(ctx, "t"))
	// measure runs prepare then op twice (the first time warms the statement cache) and
	// counts the round trips of op's second run.
	measure := func(name string, want int64, prepare, op func()) {
		t.Helper()
		var got int64
		for range 2 {
			prepare()
			before := writes.Load()
			op()
			got = writes.Load() - before
		}
		t.Logf("%s: %d round trip(s)", name, got)
		if got != want {
			t.Errorf("%s: %d round trips, want %d", name, got, want)
		}
	}
	nothing := func() {}
	newRun := func() store.Run {
		r, _, err := s.CreateRun(ctx, store.NewRun{TenantID: "t", Workflow: "w", Version: "1", Digest: "d", Input: json.RawMessage(`{}`)})
		must(err)
		return r
	}
	claim := func() store.Claim {
		claims, err := s.ClaimRuns(ctx, store.ClaimParams{Owner: "o", Limit: 1, LeaseFor: time.Hour})
		must(err)
		if len(claims) != 1 {
			t.Fatalf("claimed %d runs", len(claims))
		}
		return claims[0]
	}
	now := func() *time.Time { t := time.Now(); return &t }
	ptr := func(t time.Time) *time.Time { return &t }

	measure("CreateRun", 1, nothing, func() { newRun() })
	// CreateRun's measurement left two runs to claim.
	measure("ClaimRuns (first activation)", 1, nothing, func() { claim() })
	// A run claimed before may have a journal, which the claim loads in a second round trip.
	measure("ClaimRuns (a later activation)", 2, func() { newRun(); must(s.Release(ctx, claim().Lease)) }, func() { claim() })
	r := newRun()
	c := claim()
	seq := 0
	step := func(kind store.StepKind) store.Step {
		seq++
		return store.Step{RunID: r.ID, Seq: seq, Key: fmt.Sprint("step", seq), Kind: kind, Status: store.StepCompleted,
			Output: json.RawMessage(`1`), Attempt: 1, StartedAt: time.Now(), CompletedAt: now()}
	}
	measure("CommitStep", 1, nothing, func() { must(s.CommitStep(ctx, c.Lease, step(store.KindRun), time.Hour)) })
	// A window of the journal costs no round trip more than the whole journal: the one journal
	// statement reads at most the window and one more entry of each run.
	measure("ClaimRuns (a later activation, with a window)", 2, func() { must(s.Release(ctx, c.Lease)) }, func() {
		claims, err := s.ClaimRuns(ctx, store.ClaimParams{Owner: "o", Limit: 1, LeaseFor: time.Hour, JournalWindow: 1})
		must(err)
		if len(claims) != 1 || len(claims[0].Journal) != 1 || !claims[0].JournalMore {
			t.Fatalf("claimed %d runs, want one with one entry of its two and more", len(claims))
		}
		c = claims[0]
	})
	measure("JournalPage", 1, nothing, func() {
		page, more, err := s.JournalPage(ctx, c.Lease, c.Journal[0].Seq+1, 10)
		must(err)
		if len(page) != 1 || more {
			t.Fatalf("a page of %d entries (more %v), want the one after the window", len(page), more)
		}
	})
	measure("ResumeRun (with a window)", 1, func() { must(s.Suspend(ctx, c.Lease, nil, ptr(time.Now().Add(-time.Second)))) }, func() {
		rc, ok, err := s.ResumeRun(ctx, store.ResumeParams{RunID: r.ID, Owner: "o", LeaseFor: time.Hour, JournalWindow: 1})
		must(err)
		if !ok || len(rc.Journal) != 1 || !rc.JournalMore {
			t.Fatalf("resumed %v with %d entries (more %v), want one entry and more", ok, len(rc.Journal), rc.JournalMore)
		}
		c = rc
	})
	// A small snapshot: pgx writes a large message in several writes, which this counter would
	// count as round trips, though the client waits for one answer.
	snap := func() store.Snapshot {
		return store.Snapshot{RunID: r.ID, Seq: seq + 1, LastKey: fmt.Sprint("step", seq), Code: "c", Data: make([]byte, 1024)}
	}
	measure("SaveSnapshot", 1, nothing, func() { must(s.SaveSnapshot(ctx, c.Lease, nil, snap(), time.Hour)) })
	measure("SaveSnapshot (with a held step)", 1, nothing, func() {
		held := step(store.KindRun)
		must(s.SaveSnapshot(ctx, c.Lease, &held, snap(), time.Hour))
	})
	// A snapshot is loaded with the journal's tail, in the same round trip.
	measure("ClaimRuns (a later activation, with a snapshot)", 2, func() { must(s.Release(ctx, c.Lease)) }, func() {
		c = claim()
		if c.Snapshot == nil || c.JournalFrom != seq+1 {
			t.Fatalf("claimed with snapshot %v from %d, want one from %d", c.Snapshot, c.JournalFrom, seq+1)
		}
	})
	signal := func() {
		_, err := s.Signal(ctx, store.SignalParams{TenantID: "t", RunID: r.ID, Event: "e", Payload: json.RawMessage(`{}`), MaxBuffered: 100})
		must(err)
	}
	// A buffered event resolves the wait, which keeps the lease for the next one.
	measure("ReachWait", 1, signal, func() {
		w := step(store.KindWait)
		w.Status, w.Event, w.Output, w.CompletedAt = store.StepWaiting, "e", nil, nil
		got, err := s.ReachWait(ctx, c.Lease, w, time.Hour)
		must(err)
		if got == nil {
			t.Fatal("the wait did not resolve")
		}
	})
	measure("Signal", 1, nothing, signal)
	measure("Broadcast", 1, nothing, func() {
		_, err := s.Broadcast(ctx, store.BroadcastParams{TenantID: "t", Event: "b", Payload: json.RawMessage(`{}`)})
		must(err)
	})
	measure("ExtendLeases", 1, nothing, func() {
		_, err := s.ExtendLeases(ctx, []store.Lease{c.Lease}, time.Hour)
		must(err)
	})
	measure("NextWakeup", 1, nothing, func() {
		_, _, err := s.NextWakeup(ctx)
		must(err)
	})
	measure("ListSteps", 1, nothing, func() {
		_, err := s.ListSteps(ctx, "t", r.ID)
		must(err)
	})
	measure("Finish", 1, func() { r = newRun(); c = claim() }, func() {
		must(s.Finish(ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	})
	measure("CommitAndFinish", 1, func() { r = newRun(); c = claim(); seq = 0 }, func() {
		must(s.CommitAndFinish(ctx, c.Lease, step(store.KindRun), store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	})
}
