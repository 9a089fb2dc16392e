package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/postgres"
)

// TestCloseIsIdempotent: closing a store twice, or from several goroutines at once, is safe,
// as it is for every other Close in the daemon (a deferred Close after an explicit one, a
// shutdown path and a test cleanup both closing). The second Close used to panic on the group
// committer's closed channel.
func TestCloseIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := postgres.Open(ctx, postgres.Config{URL: databaseURL(), Schema: newSchema(t), MaxConns: testMaxConns})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
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
}
