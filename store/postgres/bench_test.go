package postgres_test

import (
	"testing"

	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/storetest"
)

// BenchmarkStore runs the store benchmarks every Store shares (storetest.Benchmark).
func BenchmarkStore(b *testing.B) { storetest.Benchmark(b, benchStore) }

// benchStore is setup for benchmarks: a migrated store on its own schema with tenant "t".
func benchStore(b *testing.B) store.Store {
	b.Helper()
	s := open(b, newSchema(b))
	if err := s.Migrate(b.Context()); err != nil {
		b.Fatal(err)
	}
	if err := s.EnsureTenant(b.Context(), "t"); err != nil {
		b.Fatal(err)
	}
	return s
}
