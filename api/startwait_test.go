package api_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// runReads is a real store that counts the runs read one by one.
type runReads struct {
	store.Store
	n atomic.Int64
}

func (c *runReads) GetRun(ctx context.Context, tenantID, runID string) (store.Run, error) {
	c.n.Add(1)
	return c.Store.GetRun(ctx, tenantID, runID)
}

// TestStartAndWaitReadsNoRunBack: POST .../runs?wait=N registers its waiter before the run can
// start, so every run that ends at once on this daemon is answered completed, from what the
// daemon recorded, with no read of the run; a repeated idempotency key reads the run it names.
// On both stores.
func TestStartAndWaitReadsNoRunBack(t *testing.T) {
	t.Parallel()
	for _, kind := range bothStores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			reads := &runReads{}
			e := setupEnvWrapped(t, kind, store.Limits{}, func(st store.Store) store.Store {
				reads.Store = st
				return reads
			})
			ctx := context.Background()
			const tok = "wait-tenant-token"
			if err := e.eng.EnsureToken(ctx, store.DefaultTenant, tok, "test"); err != nil {
				t.Fatal(err)
			}
			if _, err := e.eng.Deploy(ctx, store.DefaultTenant, testenv.Fixture(t, "examples.wasm"), false); err != nil {
				t.Fatal(err)
			}
			reads.n.Store(0)
			for i := range 20 {
				r := call(t, e.srv, "POST", "/v1/workflows/steps/runs?wait=60", tok, []byte(`{"input":{"n":1}}`))
				if run := r.json(t); r.status != 201 || run["status"] != "completed" || run["output"] == nil {
					t.Fatalf("start and wait %d: %d %s, want 201 with the completed run", i, r.status, r.body)
				}
			}
			if n := reads.n.Load(); n != 0 {
				t.Fatalf("20 starts and waits read a run %d times, want 0", n)
			}

			body := []byte(`{"input":{"n":1},"idempotencyKey":"once"}`)
			first := call(t, e.srv, "POST", "/v1/workflows/steps/runs?wait=60", tok, body)
			again := call(t, e.srv, "POST", "/v1/workflows/steps/runs?wait=60", tok, body)
			if first.status != 201 || again.status != 200 || again.json(t)["status"] != "completed" ||
				fmt.Sprint(again.json(t)["id"]) != fmt.Sprint(first.json(t)["id"]) {
				t.Fatalf("the same key again: %d %s, then %d %s", first.status, first.body, again.status, again.body)
			}
		})
	}
}
