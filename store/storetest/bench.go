package storetest

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

// Benchmark measures the store calls on a workflow's path, the same way for every Store so
// that they compare on one machine. newStore returns a fresh store with the tenant "t".
func Benchmark(b *testing.B, newStore func(b *testing.B) store.Store) {
	for _, bm := range []struct {
		name string
		run  func(*testing.B, store.Store)
	}{
		{"CommitStep", benchCommitStep},
		{"CommitStepSerial", benchCommitStepSerial},
		{"ClaimRuns", benchClaimRuns},
	} {
		b.Run(bm.name, func(b *testing.B) { bm.run(b, newStore(b)) })
	}
}

// benchCommitStep measures journal commits, the per-step cost of every workflow, from
// parallel activations (one claimed run each), as the engine makes them.
func benchCommitStep(b *testing.B, s store.Store) {
	ctx := b.Context()
	var next atomic.Int64
	b.SetParallelism(4) // 8 activations on a 2-core machine: commits share a WAL flush or fsync
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

// benchCommitStepSerial is one activation committing alone: no commit to share a flush with,
// the latency floor of a step.
func benchCommitStepSerial(b *testing.B, s store.Store) {
	ctx := b.Context()
	r, _, err := s.CreateRun(ctx, store.NewRun{TenantID: "t", Workflow: "w", Version: "1", Digest: "d", Input: json.RawMessage(`{}`)})
	if err != nil {
		b.Fatal(err)
	}
	claims, err := s.ClaimRuns(ctx, store.ClaimParams{Owner: "bench", Limit: 1, LeaseFor: time.Hour})
	if err != nil || len(claims) != 1 {
		b.Fatalf("claim: %v, %d claims", err, len(claims))
	}
	b.ResetTimer()
	for i := range b.N {
		now := time.Now()
		if err := s.CommitStep(ctx, claims[0].Lease, store.Step{RunID: r.ID, Seq: i, Key: fmt.Sprint("step", i), Kind: store.KindRun,
			Status: store.StepCompleted, Output: json.RawMessage(`{"ok":true}`), Attempt: 1, StartedAt: now, CompletedAt: &now}, time.Minute); err != nil {
			b.Fatal(err)
		}
	}
}

// benchClaimRuns measures a claim of one run with its (empty) journal.
func benchClaimRuns(b *testing.B, s store.Store) {
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
