package embedded_test

import (
	"context"
	"sync"
	"testing"

	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
)

// TestCloseIsIdempotent: closing the store twice, or from several goroutines at once, is
// safe, and the directory lock is released once, by the first.
func TestCloseIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := embedded.Open(ctx, embedded.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	st.Close()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(st.Close)
	}
	wg.Wait()
	if _, err := st.GetTenant(ctx, store.DefaultTenant); err == nil {
		t.Fatal("a closed store answered a read")
	}
	again, err := embedded.Open(ctx, embedded.Config{Dir: dir})
	if err != nil {
		t.Fatalf("the directory is still locked after Close: %v", err)
	}
	again.Close()
}
