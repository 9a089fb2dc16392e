package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wfhost/wfhost/internal/wasmgen"
)

// TestFixturesPassThePreCheck: every committed module passes the default bounds; the log says
// how close each comes (RATIONALE.md, "Bounds on an upload", has the table).
func TestFixturesPassThePreCheck(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "*.wasm"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		wasm, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		facts, err := checkModule(wasm, DefaultModuleBounds)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		t.Logf("%s (%d bytes): %+v", filepath.Base(f), len(wasm), facts)
	}
}

// FuzzCheckModule: the pre-check never panics and never reads past its input, whatever the
// bytes; it is what stands between an upload and wazero's decoder.
func FuzzCheckModule(f *testing.F) {
	f.Add(wasmgen.Workflow{}.Encode())
	for _, c := range append(wasmgen.Bombs(), wasmgen.TrapsAndAbuse()...) {
		if len(c.Wasm) < 4096 {
			f.Add(c.Wasm)
		}
	}
	if wasm, err := os.ReadFile(filepath.Join("..", "testdata", "examples_as.wasm")); err == nil {
		f.Add(wasm)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		_, _ = checkModule(wasm, DefaultModuleBounds)
	})
}
