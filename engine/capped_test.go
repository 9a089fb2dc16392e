package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// countingClaims is a store that counts the claims and next-wake-up questions made of it.
type countingClaims struct {
	store.Store
	claims, nexts *atomic.Int64
}

func (c countingClaims) ClaimRuns(ctx context.Context, p store.ClaimParams) ([]store.Claim, error) {
	c.claims.Add(1)
	return c.Store.ClaimRuns(ctx, p)
}

func (c countingClaims) NextWakeup(ctx context.Context) (time.Time, bool, error) {
	c.nexts.Add(1)
	return c.Store.NextWakeup(ctx)
}

// TestACappedTenantsBacklogIsNotPolledHot: a tenant at its concurrency cap with runs due
// behind it leaves the claimer asking the store after a wait that doubles, not every
// millisecond (afterShortClaim), and its queued runs still run, one at a time, as each run
// before them ends. The bound holds on any machine: a slower one makes fewer claims.
func TestACappedTenantsBacklogIsNotPolledHot(t *testing.T) {
	t.Parallel()
	srv, holding, release := heldServer(t)
	var claims, nexts atomic.Int64
	h := setup(t, harnessOptions{concurrency: 4, allowPrivateHosts: true, wrapStore: func(s store.Store) store.Store {
		return countingClaims{s, &claims, &nexts}
	}})
	ctx := context.Background()
	if _, _, _, err := h.engine.CreateTenant(ctx, "capped", store.Limits{AllowedHosts: []string{srv.URL}, Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.engine.Deploy(ctx, "capped", fixture(t, "capabilities.wasm"), false); err != nil {
		t.Fatal(err)
	}
	input := json.RawMessage(fmt.Sprintf(`{"url":%q}`, srv.URL+"/hold"))
	var runs []string
	for range 3 {
		run, _, err := h.engine.StartRun(ctx, "capped", engine.StartRequest{Workflow: "http-fetch", Input: input})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run.ID)
	}
	for holding.Load() < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	c0, n0 := claims.Load(), nexts.Load()
	time.Sleep(2 * time.Second)
	// Waits of 1, 2, 4, ... ms add up to 2 s in 11 rounds, each a claim and a question; the
	// poll (1 s here) adds two. Asking every millisecond made 558 of each.
	if c, n := claims.Load()-c0, nexts.Load()-n0; c > 20 || n > 20 {
		t.Errorf("in 2 s with the tenant at its cap: %d claims and %d next-wake-up questions; want at most 20 of each", c, n)
	}
	if n := holding.Load(); n != 1 {
		t.Errorf("%d of the capped tenant's runs hold a request, want 1 (its cap)", n)
	}
	release()
	awaitAll(t, h, "capped", runs)
}
