package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// TestStartedRunsRunHere: a run started on a host with a free slot and nothing queued is
// created leased to that host and runs there at once, without going through a claim.
func TestStartedRunsRunHere(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h := setup(t, harnessOptions{metrics: reg, concurrency: 2})
	h.deploy("examples.wasm", false)
	ctx := context.Background()
	req := engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":3}`)}
	// The first start may come before the claimer's first look, and then it queues.
	if r, err := h.engine.StartAndAwait(ctx, store.DefaultTenant, req); err != nil || r.Status != store.StatusCompleted {
		t.Fatalf("first run: %+v %v", r, err)
	}
	before := runsClaimed(t, reg)
	const n = 5
	for range n {
		r, err := h.engine.StartAndAwait(ctx, store.DefaultTenant, req)
		if err != nil || r.Status != store.StatusCompleted || decode[map[string]int](t, r.Output)["sum"] != 3 {
			t.Fatalf("run: %+v %v", r, err)
		}
		stored, err := h.store.GetRun(ctx, store.DefaultTenant, r.ID)
		if err != nil || stored.Status != store.StatusCompleted || stored.Activations != 1 {
			t.Fatalf("stored run: %+v %v", stored, err)
		}
	}
	if got := runsClaimed(t, reg); got != before {
		t.Fatalf("%v of %d runs started with a free slot went through a claim", got-before, n)
	}
}

// runsClaimed is how many runs the engine's claims have taken (the claim batch histogram's sum).
func runsClaimed(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "wfhost_store_claim_batch_size" {
			return f.GetMetric()[0].GetHistogram().GetSampleSum()
		}
	}
	t.Fatal("no wfhost_store_claim_batch_size metric")
	return 0
}
