package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
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

// BenchmarkParkedPassMemory parks 400 runs (40 of the Go guest's) of `steps` (a sleep of a minute after the first
// step) per guest language and reports what each parked pass costs: the heap's growth per
// pass (the instance, its goroutine and the pass), next to what the engine counts against
// ParkMemory (wfhost_parked_bytes: linear memory plus host.Park's fixed overhead).
func BenchmarkParkedPassMemory(b *testing.B) {
	for _, fx := range []struct {
		lang, file string
		runs       int // within the default ParkMemory on a machine of 4 GiB or more
	}{
		{"assemblyscript", "examples_as.wasm", 400}, {"rust", "examples_rust.wasm", 400}, {"go", "examples.wasm", 40},
	} {
		b.Run(fx.lang, func(b *testing.B) {
			runs := fx.runs
			for b.Loop() {
				reg := prometheus.NewRegistry()
				h := setup(b, harnessOptions{concurrency: 32, metrics: reg})
				h.deploy(fx.file, false)
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for range runs {
					h.start("steps", map[string]any{"n": 2, "sleepMs": 60_000})
				}
				var counted float64
				testenv.Await(b, 20*time.Second, func() error {
					m := gathered(b, reg)
					if m["wfhost_parked_passes{}"] < float64(runs) {
						return fmt.Errorf("%v of %d parked (%v bytes counted; evictions %v, parks %v)", m["wfhost_parked_passes{}"], runs,
							m["wfhost_parked_bytes{}"], m["wfhost_park_evictions_total{reason=memory}"], m["wfhost_parks_total{}"])
					}
					counted = m["wfhost_parked_bytes{}"]
					return nil
				})
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(int64(after.HeapInuse+after.StackInuse)-int64(before.HeapInuse+before.StackInuse))/float64(runs), "heap-B/pass")
				b.ReportMetric(counted/float64(runs), "counted-B/pass")
				h.engine.Stop()
			}
		})
	}
}

// BenchmarkSleepAfterEveryStep runs one `steps` run of 200 steps with a 1 ms durable sleep
// after each (AssemblyScript guest, Postgres), the shape of the scale mode's replay scenario,
// and reports the process's CPU per step: with parking, each wake-up resumes the parked pass.
func BenchmarkSleepAfterEveryStep(b *testing.B) {
	for _, mode := range []struct {
		name string
		park int64
	}{{"parked", 0}, {"replayed", -1}} {
		b.Run(mode.name, func(b *testing.B) {
			h := setup(b, harnessOptions{concurrency: 32, parkMemory: mode.park})
			h.deploy("examples_as.wasm", false)
			const steps = 200
			for b.Loop() {
				run := h.start("steps", map[string]any{"n": steps, "sleepMs": 1})
				r, err := h.engine.AwaitRun(context.Background(), store.DefaultTenant, run.ID)
				if err != nil || r.Status != store.StatusCompleted {
					b.Fatalf("run: %v %v", r.Status, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*steps), "wall-µs/step")
		})
	}
}
