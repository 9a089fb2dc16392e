package host_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/wfhost/wfhost/host"
)

// BenchmarkActivate and BenchmarkReplay10Steps (guests_bench_test.go) measure the Extism
// modules beside every native guest. What only the Extism door needs measured is the cost
// without instance reuse.

// BenchmarkActivateExtismGoFresh is BenchmarkActivate/extism-go without instance reuse: a new
// plug-in instance, instantiated and initialised, per activation.
func BenchmarkActivateExtismGoFresh(b *testing.B) {
	r, err := host.NewRuntime(context.Background(), host.Config{MaxIdleInstances: -1, CacheDir: cacheDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close(context.Background())
	m, err := r.Load(context.Background(), readFixtureB(b, "extism_go.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res, err := r.Activate(context.Background(), m, host.Activation{Workflow: "steps", Input: json.RawMessage(`{"n":0}`),
			RunID: "bench", Handler: newMemHandler()})
		if err != nil || string(res.Output) != `{"sum":0}` {
			b.Fatal(string(res.Output), err)
		}
	}
}

func readFixtureB(b *testing.B, name string) []byte {
	b.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		b.Fatal(err)
	}
	return wasm
}
