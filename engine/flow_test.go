package engine_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/postgres"
)

// TestFlowConcurrencyKeyAcrossTwoEngines: 100 runs of one concurrency key with limit 2,
// started at once through two engines sharing one Postgres, each engine with room for many
// runs, never have more than 2 of their steps running at once. The steps count themselves on a
// local HTTP server, which holds each request until a second one is in flight (while two
// can be), so the test sees the limit reached, not merely never passed.
func TestFlowConcurrencyKeyAcrossTwoEngines(t *testing.T) {
	t.Parallel()
	const runs, limit = 100, 2
	var (
		inFlight, most, served atomic.Int64
		over                   atomic.Int64
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if n > limit {
			over.Add(1)
		}
		// Wait for a second request while two runs of the key can still run together; the
		// bound only keeps a broken limit from hanging the test (the count above fails it).
		for i := 0; i < 5000 && inFlight.Load() < limit && runs-served.Load() >= limit; i++ {
			time.Sleep(time.Millisecond)
		}
		inFlight.Add(-1)
		served.Add(1)
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)

	ctx := t.Context()
	schema := testenv.Schema(t, "wfhost_engine")
	var engines []*engine.Engine
	var st *postgres.Store
	for i := range 2 {
		s, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: schema, MaxConns: 6})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		if i == 0 {
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			st = s
		}
		eng, err := engine.New(engine.Config{Store: s, Runtime: runtimeForTests(t), Owner: fmt.Sprintf("host-%d", i),
			Concurrency: 16, LeaseFor: 10 * time.Second, PollInterval: time.Second, AllowPrivateHosts: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(eng.Stop)
		engines = append(engines, eng)
	}
	const tenant = "flow"
	if _, _, _, err := engines[0].CreateTenant(ctx, tenant, store.Limits{AllowedHosts: []string{srv.URL}}); err != nil {
		t.Fatal(err)
	}
	wasm := fixture(t, "capabilities.wasm")
	if _, err := engines[0].Deploy(ctx, tenant, wasm, false); err != nil {
		t.Fatal(err)
	}
	// The committed fixture's description has no flow: bind its http-fetch workflow again with
	// one, as a deploy of a module declaring it would (the engine passes the description's flow
	// to the store as is; abi's tests cover its decoding).
	sum := sha256.Sum256(wasm)
	if _, err := st.PutModule(ctx, store.Module{TenantID: tenant, Digest: hex.EncodeToString(sum[:]), Size: len(wasm), ABIVersion: abi.Version, Bytes: wasm},
		[]store.Workflow{{TenantID: tenant, Name: "http-fetch", Version: "1", Digest: hex.EncodeToString(sum[:]), Retry: abi.RetryPolicy{Attempts: 1},
			Flow: &abi.Flow{Concurrency: &abi.FlowConcurrency{Key: "$.customerId", Limit: limit}}}}, true); err != nil {
		t.Fatal(err)
	}

	ids := make([]string, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			in, _ := json.Marshal(map[string]any{"url": srv.URL + "/step", "customerId": "c-1", "i": i})
			run, created, err := engines[i%2].StartRun(ctx, tenant, engine.StartRequest{Workflow: "http-fetch", Input: in})
			if err != nil || !created {
				t.Errorf("start %d: created %v, %v", i, created, err)
				return
			}
			ids[i] = run.ID
		})
	}
	wg.Wait()
	for i, id := range ids {
		if id == "" {
			t.Fatalf("start %d failed", i)
		}
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		run, err := engines[i%2].AwaitRun(wctx, tenant, id)
		cancel()
		if err != nil {
			t.Fatalf("await run %d: %v", i, err)
		}
		if run.Status != store.StatusCompleted {
			t.Fatalf("run %d ended %s: %+v", i, run.Status, run.Error)
		}
	}
	if over.Load() > 0 || most.Load() > limit {
		t.Fatalf("%d steps of one key ran at once (%d times over); the limit is %d", most.Load(), over.Load(), limit)
	}
	if most.Load() != limit {
		t.Fatalf("at most %d steps of the key ran at once; the limit of %d was never reached", most.Load(), limit)
	}
	if served.Load() != runs {
		t.Fatalf("the server answered %d steps, want %d", served.Load(), runs)
	}
}

// TestFlowStartRefusesBadKeysAndPriorities: a start whose input names no key for the
// workflow's flow control, or with a priority out of range, is refused as invalid and
// creates nothing.
func TestFlowStartRefusesBadKeysAndPriorities(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: testenv.Schema(t, "wfhost_engine"), MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Store: st, Runtime: runtimeForTests(t), LeaseFor: 3 * time.Second, PollInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const tenant = "flowbad"
	if _, _, _, err := eng.CreateTenant(ctx, tenant, store.Limits{}); err != nil {
		t.Fatal(err)
	}
	wasm := fixture(t, "capabilities.wasm")
	if _, err := eng.Deploy(ctx, tenant, wasm, false); err != nil {
		t.Fatal(err)
	}
	sum := hex.EncodeToString(func() []byte { s := sha256.Sum256(wasm); return s[:] }())
	if _, err := st.PutModule(ctx, store.Module{TenantID: tenant, Digest: sum, Size: len(wasm), ABIVersion: abi.Version, Bytes: wasm},
		[]store.Workflow{{TenantID: tenant, Name: "http-fetch", Version: "1", Digest: sum,
			Flow: &abi.Flow{Concurrency: &abi.FlowConcurrency{Key: "$.customer.id", Limit: 1}}}}, true); err != nil {
		t.Fatal(err)
	}
	for name, req := range map[string]engine.StartRequest{
		"no key":          {Input: json.RawMessage(`{"url":"x"}`)},
		"object key":      {Input: json.RawMessage(`{"customer":{"id":{"a":1}}}`)},
		"absurd key":      {Input: json.RawMessage(`{"customer":{"id":"` + strings.Repeat("z", 10_000) + `"}}`)},
		"NUL in the key":  {Input: json.RawMessage(`{"customer":{"id":"a\u0000"}}`)},
		"non-UTF-8 key":   {Input: json.RawMessage("{\"customer\":{\"id\":\"\xff\"}}")},
		"priority high":   {Input: json.RawMessage(`{"customer":{"id":"a"}}`), Priority: ptr(601)},
		"priority absurd": {Input: json.RawMessage(`{"customer":{"id":"a"}}`), Priority: ptr(-1 << 40)},
	} {
		req.Workflow = "http-fetch"
		_, _, err := eng.StartRun(ctx, tenant, req)
		if !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: err = %v, want engine.ErrInvalid", name, err)
		}
	}
	runs, _, err := st.ListRuns(ctx, tenant, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 0 {
		t.Fatalf("refused starts created %d runs", len(runs))
	}
}

func ptr[T any](v T) *T { return &v }
