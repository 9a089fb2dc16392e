package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
)

// benchFixtures are the committed modules the compile path is measured on, smallest to largest.
var benchFixtures = []string{"examples_as.wasm", "examples_rust.wasm", "examples.wasm", "capabilities.wasm"}

// BenchmarkCheckModule is the structural pre-check of each fixture.
func BenchmarkCheckModule(b *testing.B) {
	for _, f := range benchFixtures {
		wasm := readBenchFixture(b, f)
		b.Run(f, func(b *testing.B) {
			b.SetBytes(int64(len(wasm)))
			for b.Loop() {
				if _, err := checkModule(wasm, DefaultModuleBounds); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompilePaths compares a cold compile in the daemon's own process (how modules were
// compiled before the worker), the same compile in a compile worker (process start included),
// and the daemon's CompileModule once the worker has filled the cache: what a load costs the
// daemon now.
func BenchmarkCompilePaths(b *testing.B) {
	ctx := context.Background()
	for _, f := range benchFixtures {
		wasm := readBenchFixture(b, f)
		b.Run(f+"/in-process", func(b *testing.B) {
			for b.Loop() {
				cache, err := wazero.NewCompilationCacheWithDir(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				rt := wazero.NewRuntimeWithConfig(ctx, runtimeConfig(1024, cache))
				if _, err := rt.CompileModule(ctx, wasm); err != nil {
					b.Fatal(err)
				}
				_ = rt.Close(ctx)
				_ = cache.Close(ctx)
			}
		})
		b.Run(f+"/worker", func(b *testing.B) {
			for b.Loop() {
				r, err := NewRuntime(ctx, Config{CacheDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				if err := r.workerCompile(ctx, "", wasm, compileOptions{pages: 1024}); err != nil {
					b.Fatal(err)
				}
				_ = r.Close(ctx)
			}
		})
		b.Run(f+"/daemon-after-worker", func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				dir := b.TempDir()
				r, err := NewRuntime(ctx, Config{CacheDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				if err := r.workerCompile(ctx, "", wasm, compileOptions{pages: 1024}); err != nil {
					b.Fatal(err)
				}
				_ = r.Close(ctx)
				cache, err := wazero.NewCompilationCacheWithDir(dir)
				if err != nil {
					b.Fatal(err)
				}
				rt := wazero.NewRuntimeWithConfig(ctx, runtimeConfig(1024, cache))
				b.StartTimer()
				if _, err := rt.CompileModule(ctx, wasm); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = rt.Close(ctx)
				_ = cache.Close(ctx)
				b.StartTimer()
			}
		})
	}
}

func readBenchFixture(b *testing.B, name string) []byte {
	b.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		b.Fatal(err)
	}
	return wasm
}
