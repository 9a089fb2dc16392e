package embedded_test

import (
	"testing"

	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/storetest"
)

// BenchmarkStore runs the store benchmarks every Store shares (storetest.Benchmark).
func BenchmarkStore(b *testing.B) { storetest.Benchmark(b, benchStore) }

// benchStore is setup for benchmarks: a store in a fresh directory with tenant "t".
func benchStore(b *testing.B) store.Store {
	b.Helper()
	s := open(b, b.TempDir())
	if err := s.EnsureTenant(b.Context(), "t"); err != nil {
		b.Fatal(err)
	}
	return s
}
