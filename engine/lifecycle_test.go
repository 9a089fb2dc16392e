package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/lifecycle"
	"github.com/wfhost/wfhost/store"
)

// TestStartStopUnderLoad starts and stops engines on one store from many goroutines at once,
// each engine from several, while runs are started on them and are running: an engine starts
// at most once, a Start after its Stop is refused, every Stop returns with the engine's loops
// and activations ended, and every run still ends, on whichever engine takes it. Real
// concurrency is the point here, so nothing is faked; -race checks the rest.
func TestStartStopUnderLoad(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{noStart: true, concurrency: 4})
	h.deploy("examples.wasm", false)
	ctx := context.Background()
	engines := []*engine.Engine{h.engine}
	for range 3 {
		engines = append(engines, h.newEngine(engine.Config{Concurrency: 4}))
	}
	var mu sync.Mutex
	var runs []string
	start := func(eng *engine.Engine, i int) {
		run, _, err := eng.StartRun(ctx, store.DefaultTenant, engine.StartRequest{
			Workflow: "steps", Input: []byte(fmt.Sprintf(`{"n": %d, "sleepMs": 0}`, 1+i%3)),
		})
		if err != nil {
			t.Errorf("start: %v", err)
			return
		}
		mu.Lock()
		runs = append(runs, run.ID)
		mu.Unlock()
	}
	for i := range 8 {
		start(h.engine, i)
	}

	var wg sync.WaitGroup
	var starts [4]int
	var startsMu sync.Mutex
	for e, eng := range engines {
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch i % 4 {
				case 0, 1:
					err := eng.Start(ctx)
					switch {
					case err == nil:
						startsMu.Lock()
						starts[e]++
						startsMu.Unlock()
					case !errors.Is(err, lifecycle.ErrStarted) && !errors.Is(err, lifecycle.ErrStopped):
						t.Errorf("engine %d: start: %v", e, err)
					}
				case 2:
					start(eng, i)
				default:
					eng.Stop()
				}
			}()
		}
	}
	wg.Wait()
	for e, eng := range engines {
		eng.Stop()
		if starts[e] > 1 {
			t.Errorf("engine %d started %d times", e, starts[e])
		}
		if err := eng.Start(ctx); !errors.Is(err, lifecycle.ErrStopped) {
			t.Errorf("engine %d: start after stop: %v, want ErrStopped", e, err)
		}
	}

	// Whatever the stopped engines left (queued runs, released leases), a new one finishes.
	last := h.newEngine(engine.Config{Concurrency: 8})
	if err := last.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(last.Stop)
	for _, id := range runs {
		h.await(id, time.Minute, store.StatusCompleted)
	}
}

// newEngine is another engine on the harness's store, with the harness's settings where cfg
// leaves them zero.
func (h *harness) newEngine(cfg engine.Config) *engine.Engine {
	h.t.Helper()
	cfg.Store, cfg.Runtime = h.store, runtimeForTests(h.t)
	if cfg.LeaseFor == 0 {
		cfg.LeaseFor = 3 * time.Second
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = time.Second
	}
	eng, err := engine.New(cfg)
	if err != nil {
		h.t.Fatalf("new engine: %v", err)
	}
	h.t.Cleanup(eng.Stop)
	return eng
}
