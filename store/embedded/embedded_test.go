package embedded_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
	"github.com/wfhost/wfhost/store/storetest"
)

// open opens a store in dir, closed when the test ends.
func open(t testing.TB, dir string) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(t.Context(), embedded.Config{Dir: dir})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestConformance runs the suite on the store's injected clock: leases run out and retentions
// pass when the suite moves the clock, not after sleeps.
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.ExerciseOnClock(t, func(t *testing.T, clk clock.Clock) store.Store {
		s, err := embedded.Open(t.Context(), embedded.Config{Dir: t.TempDir(), Clock: clk})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(s.Close)
		return s
	})
}

// TestSecondOpenIsRefused: two daemons on one data directory would each think they own every
// lease; the second is refused with a clear error while the first holds the directory, and
// admitted once it has closed.
func TestSecondOpenIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := embedded.Open(t.Context(), embedded.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = embedded.Open(t.Context(), embedded.Config{Dir: dir})
	if !errors.Is(err, embedded.ErrLocked) {
		t.Fatalf("second open: got %v, want ErrLocked", err)
	}
	t.Logf("second open: %v", err)
	first.Close()
	first.Close() // idempotent
	again := open(t, dir)
	if ok, err := again.MigrationsCurrent(t.Context()); err != nil || !ok {
		t.Fatalf("reopened store: migrations current %v, %v", ok, err)
	}
}

func TestOpenNeedsADirectory(t *testing.T) {
	t.Parallel()
	if _, err := embedded.Open(t.Context(), embedded.Config{}); err == nil {
		t.Fatal("opened a store with no directory")
	}
}

// TestWritesAfterCloseFail: a write that races Close, or comes after it, gets an error instead
// of waiting forever for a writer that has gone.
func TestWritesAfterCloseFail(t *testing.T) {
	t.Parallel()
	s, err := embedded.Open(t.Context(), embedded.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 50)
	for range cap(done) {
		go func() { done <- s.EnsureTenant(context.Background(), "t") }()
	}
	s.Close()
	for range cap(done) {
		<-done // each returns, with nil (it committed before Close) or an error
	}
	if err := s.EnsureTenant(context.Background(), "t"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a write after Close: got %v, want store.ErrUnavailable", err)
	}
	if _, err := s.GetTenant(context.Background(), "t"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a read after Close: got %v, want store.ErrUnavailable", err)
	}
}
