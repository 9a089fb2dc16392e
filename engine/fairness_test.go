package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// heldServer answers each request once release is closed, counting the requests it holds.
func heldServer(t *testing.T) (srv *httptest.Server, holding *atomic.Int32, release func()) {
	t.Helper()
	holding = &atomic.Int32{}
	gate := make(chan struct{})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		holding.Add(1)
		defer holding.Add(-1)
		<-gate
		fmt.Fprint(w, "ok")
	}))
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(srv.Close)
	t.Cleanup(release)
	return srv, holding, release
}

// TestAReservedSlotRunsAQuietTenantPastABusyOnesQueue: every ordinary slot is held by tenant
// "busy", whose runs wait on an HTTP server, and more of its runs are queued. Tenant "quiet",
// with nothing in flight, starts a run: it runs at once in a reserved slot and completes while
// busy's runs still hold theirs and its queue is untouched: busy's queued runs never take the
// reserve.
func TestAReservedSlotRunsAQuietTenantPastABusyOnesQueue(t *testing.T) {
	t.Parallel()
	srv, holding, release := heldServer(t)
	// Two reserved slots: busy's first start may take one, if the claimer held the ordinary
	// slots for a claim just then (busy was quiet: that is what the reserve is for).
	h := setup(t, harnessOptions{concurrency: 2, reservedSlots: 2, allowPrivateHosts: true})
	ctx := context.Background()
	if _, _, _, err := h.engine.CreateTenant(ctx, "busy", store.Limits{AllowedHosts: []string{srv.URL}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.engine.Deploy(ctx, "busy", fixture(t, "capabilities.wasm"), false); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := h.engine.CreateTenant(ctx, "quiet", store.Limits{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.engine.Deploy(ctx, "quiet", fixture(t, "examples.wasm"), false); err != nil {
		t.Fatal(err)
	}
	input := json.RawMessage(fmt.Sprintf(`{"url":%q}`, srv.URL+"/hold"))
	const runs = 5
	var busy []string
	for range runs {
		run, _, err := h.engine.StartRun(ctx, "busy", engine.StartRequest{Workflow: "http-fetch", Input: input})
		if err != nil {
			t.Fatal(err)
		}
		busy = append(busy, run.ID)
	}
	pending := func() int {
		return h.count(`SELECT count(*) FROM runs WHERE tenant_id = 'busy' AND status = 'pending'`)
	}
	// Settled: every run of busy not queued is held by the server, the ordinary slots all.
	for n := int(holding.Load()); n < 2 || n+pending() != runs; n = int(holding.Load()) {
		time.Sleep(5 * time.Millisecond)
	}
	held, queued := holding.Load(), pending()
	if queued == 0 {
		t.Fatalf("none of busy's %d runs queued with %d held", runs, held)
	}

	actx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	done, err := h.engine.StartAndAwait(actx, "quiet", engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":3}`)})
	if err != nil {
		t.Fatalf("the quiet tenant's run, with every ordinary slot held: %v", err)
	}
	if done.Status != store.StatusCompleted {
		t.Fatalf("the quiet tenant's run ended %s: %+v", done.Status, done.Error)
	}
	if n := holding.Load(); n != held {
		t.Fatalf("%d of busy's requests held after the quiet run, %d before", n, held)
	}
	if n := pending(); n != queued {
		t.Fatalf("%d of busy's runs queued after the quiet run, %d before: a busy tenant's run took the reserve", n, queued)
	}

	release()
	awaitAll(t, h, "busy", busy)
}

// startsInFlight is a store that counts each tenant's starts in flight at once, holding each
// a little so that starts sent together overlap.
type startsInFlight struct {
	store.Store
	mu      sync.Mutex
	now     map[string]int
	most    map[string]int
	holdFor time.Duration
}

func (s *startsInFlight) CreateLeasedRun(ctx context.Context, r store.NewRun, to store.LeaseTo) (store.Claim, bool, error) {
	s.mu.Lock()
	s.now[r.TenantID]++
	s.most[r.TenantID] = max(s.most[r.TenantID], s.now[r.TenantID])
	s.mu.Unlock()
	time.Sleep(s.holdFor)
	defer func() {
		s.mu.Lock()
		s.now[r.TenantID]--
		s.mu.Unlock()
	}()
	return s.Store.CreateLeasedRun(ctx, r, to)
}

// mostAtOnce returns and forgets the most starts tenant had in flight at once.
func (s *startsInFlight) mostAtOnce(tenant string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.most[tenant]
	delete(s.most, tenant)
	return n
}

// TestATenantsStartsAreBoundedWhileAnotherIsAbout: tenant "a" alone sends its eight starts to
// the store together; once tenant "b" has started a run (and so is about), a's eight starts
// reach the store at most TenantStarts at a time, and all of them still start their runs.
func TestATenantsStartsAreBoundedWhileAnotherIsAbout(t *testing.T) {
	t.Parallel()
	rec := &startsInFlight{now: map[string]int{}, most: map[string]int{}, holdFor: 20 * time.Millisecond}
	h := setup(t, harnessOptions{tenantStarts: 2, wrapStore: func(s store.Store) store.Store { rec.Store = s; return rec }})
	ctx := context.Background()
	for _, tenant := range []string{"a", "b"} {
		if _, _, _, err := h.engine.CreateTenant(ctx, tenant, store.Limits{}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.engine.Deploy(ctx, tenant, fixture(t, "examples.wasm"), false); err != nil {
			t.Fatal(err)
		}
	}
	burst := func() []string {
		ids := make([]string, 8)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Go(func() {
				run, _, err := h.engine.StartRun(ctx, "a", engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":1}`)})
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = run.ID
			})
		}
		wg.Wait()
		return ids
	}

	alone := burst()
	if n := rec.mostAtOnce("a"); n <= 2 {
		t.Fatalf("tenant a alone had at most %d starts in flight of 8 sent together: a tenant alone must not be bounded", n)
	}
	if _, err := h.engine.StartAndAwait(ctx, "b", engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	shared := burst()
	if n := rec.mostAtOnce("a"); n > 2 {
		t.Fatalf("tenant a had %d starts in flight while b was about, over its share of 2", n)
	}
	awaitAll(t, h, "a", append(alone, shared...))
}

// awaitAll waits for the tenant's runs to end, and fails the test unless each completed.
func awaitAll(t *testing.T, h *harness, tenant string, ids []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	for _, id := range ids {
		r, err := h.engine.AwaitRun(ctx, tenant, id)
		if err != nil {
			t.Fatalf("await run %s: %v", id, err)
		}
		if r.Status != store.StatusCompleted {
			t.Fatalf("run %s: %s %+v", id, r.Status, r.Error)
		}
	}
}
