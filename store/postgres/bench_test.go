package postgres_test

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

// BenchmarkCommitStep measures journal commits, the per-step cost of every workflow, from
// parallel activations (one claimed run each), as the engine makes them.
func BenchmarkCommitStep(b *testing.B) {
	s := benchStore(b)
	ctx := b.Context()
	var next atomic.Int64
	b.SetParallelism(4) // 8 activations on this 2-core machine: commits group in the WAL flush
	b.RunParallel(func(pb *testing.PB) {
		r, _, err := s.CreateRun(ctx, store.NewRun{TenantID: "t", Workflow: "w", Version: "1", Digest: "d", Input: json.RawMessage(`{}`)})
		if err != nil {
			b.Error(err)
			return
		}
		var lease store.Lease
		for lease.RunID != r.ID {
			claims, err := s.ClaimRuns(ctx, store.ClaimParams{Owner: "bench", Limit: 1, LeaseFor: time.Hour})
			if err != nil {
				b.Error(err)
				return
			}
			for _, c := range claims {
				if c.Run.ID == r.ID {
					lease = c.Lease
				} else {
					_ = s.Release(ctx, c.Lease)
				}
			}
		}
		seq := 0
		for pb.Next() {
			now := time.Now()
			err := s.CommitStep(ctx, lease, store.Step{RunID: r.ID, Seq: seq, Key: fmt.Sprint("step", next.Add(1)), Kind: store.KindRun,
				Status: store.StepCompleted, Output: json.RawMessage(`{"ok":true}`), Attempt: 1, StartedAt: now, CompletedAt: &now}, time.Minute)
			if err != nil {
				b.Error(err)
				return
			}
			seq++
		}
	})
}

// BenchmarkClaimRuns measures a claim of one run with its (empty) journal.
func BenchmarkClaimRuns(b *testing.B) {
	s := benchStore(b)
	ctx := b.Context()
	for range b.N {
		if _, _, err := s.CreateRun(ctx, store.NewRun{TenantID: "t", Workflow: "w", Version: "1", Digest: "d", Input: json.RawMessage(`{}`)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		claims, err := s.ClaimRuns(ctx, store.ClaimParams{Owner: "bench", Limit: 1, LeaseFor: time.Hour})
		if err != nil || len(claims) != 1 {
			b.Fatalf("claim: %v, %d claims", err, len(claims))
		}
	}
}

// benchStore is setup for benchmarks: a migrated store on its own schema with tenant "t".
func benchStore(b *testing.B) store.Store {
	b.Helper()
	s := open(b, newSchema(b))
	if err := s.Migrate(b.Context()); err != nil {
		b.Fatal(err)
	}
	if err := s.EnsureTenant(b.Context(), "t"); err != nil {
		b.Fatal(err)
	}
	return s
}
