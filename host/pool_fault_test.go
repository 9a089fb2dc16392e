package host

import (
	"context"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/wfhost/wfhost/internal/wasmgen"
)

// stubHandler serves a pass that makes no workflow call.
type stubHandler struct{ Handler }

func (stubHandler) Now() time.Time      { return time.Time{} }
func (stubHandler) CurrentStep() string { return "" }

// idleInstances is how many instances of m the runtime keeps idle for a memory limit.
func (r *Runtime) idleInstances(m *Module, pages uint32) int {
	r.mu.Lock()
	p := r.byPages[pages]
	r.mu.Unlock()
	p.mu.Lock()
	e := p.compiled[m.Digest]
	p.mu.Unlock()
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	return len(e.c.idle)
}

// TestFaultedInstancesAreNotKept (the attack's RSS finding): an instance whose activation ended
// in a guest fault is closed, not kept idle. Unbounded recursion grows wazero's call stack to
// about 100 MB before it overflows, and that stack lives with the instance: eight recursing
// activations kept 645 MiB of heap alive in idle instances before this. A well-behaved module's
// instances are still kept.
func TestFaultedInstancesAreNotKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, err := NewRuntime(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	recurse := []byte{wasmgen.OpCall, wasmgen.ExtraIndex}
	deep, err := r.Load(ctx, wasmgen.Workflow{Run: recurse, Extra: []wasmgen.Func{{Body: recurse}}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	good, err := r.Load(ctx, wasmgen.Workflow{Name: "good"}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	activate := func(m *Module, workflow string) (Stats, error) {
		var stats Stats
		_, err := r.Activate(ctx, m, Activation{Workflow: workflow, RunID: "r", Handler: stubHandler{},
			Limits: Limits{MemoryPages: 64, WallTime: 2 * time.Minute}, Logger: slog.New(slog.DiscardHandler), Stats: &stats})
		return stats, err
	}
	type ended struct {
		stats Stats
		err   error
	}
	done := make(chan ended)
	for range 4 {
		go func() {
			stats, err := activate(deep, "w")
			done <- ended{stats, err}
		}()
	}
	for range 4 {
		e := <-done
		if e.err == nil {
			t.Fatal("unbounded recursion did not trap")
		}
		// The stats say why the instance went (the engine counts it by reason).
		if e.stats.Discarded != DiscardFaulted {
			t.Fatalf("a trapped activation's instance: discarded %q, want %q", e.stats.Discarded, DiscardFaulted)
		}
	}
	if stats, err := activate(good, "good"); err != nil || stats.Discarded != "" {
		t.Fatalf("the well-behaved activation: %v, its instance discarded %q, want kept", err, stats.Discarded)
	}
	// With pooling off, a well-behaved activation's instance goes too, and says so.
	off, err := NewRuntime(ctx, Config{MaxIdleInstances: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close(ctx)
	goodOff, err := off.Load(ctx, wasmgen.Workflow{Name: "good"}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	var offStats Stats
	if _, err := off.Activate(ctx, goodOff, Activation{Workflow: "good", RunID: "r", Handler: stubHandler{},
		Limits: Limits{MemoryPages: 64, WallTime: time.Minute}, Logger: slog.New(slog.DiscardHandler), Stats: &offStats}); err != nil || offStats.Discarded != DiscardNotPoolable {
		t.Fatalf("with pooling off: %v, discarded %q, want %q", err, offStats.Discarded, DiscardNotPoolable)
	}
	if n := r.idleInstances(deep, 64); n != 0 {
		t.Fatalf("%d instances that trapped are kept idle", n)
	}
	if n := r.idleInstances(good, 64); n != 1 {
		t.Fatalf("%d idle instances of the well-behaved module, want 1", n)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap in use after four recursing activations and a GC: %d MiB", ms.HeapInuse>>20)
}
