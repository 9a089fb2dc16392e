package host_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wfhost/wfhost/host"
)

// guestBenchFixtures are the example modules that implement the same workflows in every guest
// language (the engine's conformance suite holds them to the same journals), so their costs
// compare like for like. The TinyGo build is optional (make testdata/tinygo) and skipped when
// absent.
var guestBenchFixtures = []struct{ lang, file string }{
	{"go", "examples.wasm"},
	{"tinygo", "tinygo/examples.wasm"},
	{"rust", "examples_rust.wasm"},
	{"assemblyscript", "examples_as.wasm"},
	{"extism-go", "extism_go.wasm"},
	{"extism-as", "extism_as.wasm"},
}

// benchEachGuest runs fn on every guest's module, reporting the module's size.
func benchEachGuest(b *testing.B, fn func(b *testing.B, m *host.Module)) {
	for _, fx := range guestBenchFixtures {
		b.Run(fx.lang, func(b *testing.B) {
			fi, err := os.Stat(filepath.Join("..", "testdata", fx.file))
			if err != nil {
				b.Skipf("%s is not built", fx.file)
			}
			fn(b, load(b, fx.file))
			b.ReportMetric(float64(fi.Size()), "wasm-bytes")
		})
	}
}

// BenchmarkActivate is the host's cost of one activation, database excluded: `steps` with n=0
// takes an instance (instantiated, or reset to its post-initialisation snapshot), passes the
// name and input, runs the workflow and takes its output.
func BenchmarkActivate(b *testing.B) {
	benchEachGuest(b, func(b *testing.B, m *host.Module) {
		for b.Loop() {
			if _, err := activate(b, m, "steps", "bench", `{"n":0}`, newMemHandler(), host.Limits{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReplay10Steps is an activation that replays ten journaled steps and completes.
func BenchmarkReplay10Steps(b *testing.B) {
	benchEachGuest(b, func(b *testing.B, m *host.Module) {
		h := newMemHandler()
		if _, err := activate(b, m, "steps", "bench", `{"n":10}`, h, host.Limits{}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			h.replay()
			if _, err := activate(b, m, "steps", "bench", `{"n":10}`, h, host.Limits{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
