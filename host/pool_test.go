package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
)

// errSuspended unwinds the guest at a durable sleep, as the engine's suspension does.
var errSuspended = errors.New("suspended")

// sleepyHandler suspends the pass at every sleep it has not seen before.
type sleepyHandler struct {
	*memHandler
	slept map[string]bool
}

func (h *sleepyHandler) Sleep(ctx context.Context, name string, d time.Duration) (host.Reply, error) {
	key := name
	if n := h.seen[name]; n > 0 {
		key = name + "#" + string(rune('0'+n))
	}
	if !h.slept[key] {
		h.slept[key] = true
		return host.Reply{}, errSuspended
	}
	return h.memHandler.Sleep(ctx, name, d)
}

// cacheDir is the compilation cache every test runtime shares (see runtime), so a module is
// compiled once per machine rather than once per runtime (seconds under the race detector).
func cacheDir() string { return filepath.Join(os.TempDir(), "wfhost-test-compile-cache") }

func newRuntime(t *testing.T, idle int) *host.Runtime {
	t.Helper()
	r, err := host.NewRuntime(context.Background(), host.Config{MaxIdleInstances: idle, CacheDir: cacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	return r
}

func activateOn(t *testing.T, r *host.Runtime, m *host.Module, workflow, runID, input string, h host.Handler, limits host.Limits) (host.Result, host.Stats, error) {
	t.Helper()
	var st host.Stats
	res, err := r.Activate(context.Background(), m, host.Activation{Workflow: workflow, Input: json.RawMessage(input), RunID: runID,
		Handler: h, Limits: limits, Logger: slog.New(slog.DiscardHandler), Stats: &st})
	return res, st, err
}

// TestInstancesAreReusedAndBehaveLikeFreshOnes: after the first activation, activations take
// a reset instance (no instantiation), including after passes unwound mid-call by a
// suspension, and what a workflow observes on a reused instance is what it observes on a
// fresh one.
//
// TestBrokenInstancesAreNotReused runs after it on the same runtime (runtimes are costly to
// make under the race detector, and the reuse assertions need one no other test touches).
func TestInstancesAreReusedAndBehaveLikeFreshOnes(t *testing.T) {
	t.Parallel()
	pooled := newRuntime(t, 4)
	t.Run("Reuse", func(t *testing.T) { testReuse(t, pooled) })
	t.Run("Broken", func(t *testing.T) { testBrokenInstancesAreNotReused(t, pooled) })
}

func testReuse(t *testing.T, pooled *host.Runtime) {
	for _, fixture := range []string{"examples.wasm"} {
		r := pooled
		wasm := readFixture(t, fixture)
		m, err := r.Load(context.Background(), wasm)
		if err != nil {
			t.Fatal(err)
		}
		res, first, err := activateOn(t, r, m, "steps", "r1", `{"n":3}`, newMemHandler(), host.Limits{})
		if err != nil || string(res.Output) != `{"sum":3}` || first.Instantiate == 0 {
			t.Fatalf("first activation: %s %v %+v", res.Output, err, first)
		}
		res, again, err := activateOn(t, r, m, "steps", "r2", `{"n":4}`, newMemHandler(), host.Limits{})
		if err != nil || string(res.Output) != `{"sum":6}` || again.Instantiate != 0 {
			t.Fatalf("second activation (should reuse): %s %v %+v", res.Output, err, again)
		}

		// A polling run suspended at each sleep: every pass after the first unwinds the guest
		// in the middle of a call, and the next one still runs correctly on the reset instance.
		h := &sleepyHandler{memHandler: newMemHandler(), slept: map[string]bool{}}
		passes := 0
		for {
			passes++
			res, st, err := activateOn(t, r, m, "poll", "r3", `{"until":3,"intervalMs":1}`, h, host.Limits{})
			if st.Instantiate != 0 {
				t.Fatalf("pass %d instantiated instead of reusing", passes)
			}
			if errors.Is(err, errSuspended) {
				h.replay()
				continue
			}
			if err != nil || string(res.Output) != `{"checks":3}` {
				t.Fatalf("poll after %d passes: %s %v", passes, res.Output, err)
			}
			break
		}
		if passes != 3 {
			t.Fatalf("%d passes, want 3 (two suspensions)", passes)
		}
	}

	// The determinism workflow sees the same clock, random numbers and map order outside steps
	// on a reused instance as on a fresh one (a runtime that keeps no instances).
	fresh := newRuntime(t, -1)
	seen := func(r *host.Runtime, warm bool) observed {
		m, err := r.Load(context.Background(), readFixture(t, "hostile.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if warm {
			if _, _, err := activateOn(t, r, m, "echo", "warm", `{}`, newMemHandler(), host.Limits{}); err != nil {
				t.Fatal(err)
			}
		}
		res, st, err := activateOn(t, r, m, "determinism", "run-a", `{}`, newMemHandler(), host.Limits{})
		if err != nil || res.Error != nil {
			t.Fatalf("determinism: %v %+v", err, res.Error)
		}
		if warm && st.Instantiate != 0 {
			t.Fatal("the warmed runtime did not reuse its instance")
		}
		var o observed
		if err := json.Unmarshal(res.Output, &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	a, b := seen(fresh, false), seen(pooled, true)
	if a.Now != b.Now || a.MathRand != b.MathRand || a.CryptoRand != b.CryptoRand || a.AfterStep == 0 || len(a.MapOrder) != 8 || fmtSlice(a.MapOrder) != fmtSlice(b.MapOrder) {
		t.Fatalf("fresh and reused instances saw different values outside steps:\n%+v\n%+v", a, b)
	}
}

// testBrokenInstancesAreNotReused: an instance closed by its deadline, or whose memory grew,
// is dropped, and the next activation gets a working one.
func testBrokenInstancesAreNotReused(t *testing.T, r *host.Runtime) {
	m, err := r.Load(context.Background(), readFixture(t, "hostile.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	echo := func() host.Stats {
		res, st, err := activateOn(t, r, m, "echo", "e", `{"x":1}`, newMemHandler(), host.Limits{})
		if err != nil || string(res.Output) != `{"x":1}` {
			t.Fatalf("echo: %s %v", res.Output, err)
		}
		return st
	}
	echo()
	_, _, err = activateOn(t, r, m, "spin", "s", `{}`, newMemHandler(), host.Limits{WallTime: 200 * time.Millisecond})
	var ge *host.GuestError
	if !errors.As(err, &ge) || ge.Info.Code != abi.CodeDeadline {
		t.Fatalf("spin: %v", err)
	}
	echo()
	_, _, err = activateOn(t, r, m, "membomb", "m", `{}`, newMemHandler(), host.Limits{MemoryPages: 200})
	if !errors.As(err, &ge) || ge.Info.Code != abi.CodeTrap {
		t.Fatalf("membomb: %v", err)
	}
	echo()
	if st := echo(); st.Instantiate != 0 {
		t.Fatal("a healthy instance was not reused")
	}
}

func fmtSlice(s []string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}
