package engine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// BenchmarkDrain10StepRuns drains 200 runs of the 10-step `steps` workflow (standard Go guest,
// Postgres store) per iteration and reports steps per second. A first figure, not the
// benchmark harness the performance work will build.
func BenchmarkDrain10StepRuns(b *testing.B) {
	h := setupBench(b)
	const runs, steps = 200, 10
	ctx := context.Background()
	var total time.Duration
	for b.Loop() {
		began := time.Now()
		ids := make([]string, runs)
		for i := range ids {
			run, _, err := h.engine.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":10}`)})
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = run.ID
		}
		for _, id := range ids {
			// AwaitRun hears of a run's end from the activation that ended it: no polling,
			// whose interval would count in the figure.
			r, err := h.engine.AwaitRun(ctx, store.DefaultTenant, id)
			if err != nil {
				b.Fatal(err)
			}
			if !r.Status.Terminal() {
				b.Fatalf("run %s ended %s", id, r.Status)
			}
		}
		total += time.Since(began)
	}
	b.ReportMetric(float64(runs*steps*b.N)/total.Seconds(), "steps/s")
	b.ReportMetric(float64(runs*b.N)/total.Seconds(), "runs/s")
}
