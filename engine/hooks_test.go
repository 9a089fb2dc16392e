package engine_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
)

// webhookReceiver is a local server that answers each request with the next of its statuses
// (200 once they run out) and keeps what it received.
type webhookReceiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	statuses []int
	got      []received
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, statuses ...int) *webhookReceiver {
	rc := &webhookReceiver{statuses: statuses}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{header: r.Header.Clone(), body: body})
		status := http.StatusOK
		if len(rc.statuses) > 0 {
			status, rc.statuses = rc.statuses[0], rc.statuses[1:]
		}
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *webhookReceiver) received() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// verifySignature checks a Wfhost-Signature header as a receiver would: HMAC-SHA256 of
// "<t>.<body>" under the secret, and a t close to now.
func verifySignature(t *testing.T, secret []byte, header string, body []byte) {
	t.Helper()
	var ts, v1 string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			v1 = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		t.Fatalf("signature %q: timestamp %q is not a recent Unix time", header, ts)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	if want := hex.EncodeToString(mac.Sum(nil)); !hmac.Equal([]byte(v1), []byte(want)) {
		t.Fatalf("signature %q does not verify: want v1=%s", header, want)
	}
}

func (h *harness) deliveries(f store.DeliveryFilter) []store.HookDelivery {
	h.t.Helper()
	ds, err := h.store.ListDeliveries(context.Background(), store.DefaultTenant, f)
	if err != nil {
		h.t.Fatal(err)
	}
	return ds
}

// A webhook is delivered to a local server with a signature the tenant's secret verifies,
// tried again after the server's 500, and listed with both attempts; the run is unchanged.
func TestWebhookSignedAndRetried(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, http.StatusInternalServerError)
	h := setup(t, harnessOptions{allowPrivateHosts: true, hookPoll: time.Hour, hookBackoff: time.Millisecond,
		limits: store.Limits{AllowedHosts: []string{rc.srv.URL}}, secretKeys: testenv.SecretKeys(t)})
	h.deploy("examples.wasm", false)
	ctx := context.Background()
	hook, created, secret, err := h.engine.PutHook(ctx, store.DefaultTenant, engine.HookRequest{ID: "notify", Workflow: "steps",
		Hook: abi.Hook{When: []string{"completed"}, Webhook: rc.srv.URL + "/in"}})
	if err != nil || !created || len(secret) == 0 || hook.URL != rc.srv.URL+"/in" {
		t.Fatalf("put hook: %+v created %v secret %q: %v", hook, created, secret, err)
	}
	// A second webhook shows no secret: it was shown once.
	if _, _, again, err := h.engine.PutHook(ctx, store.DefaultTenant, engine.HookRequest{ID: "notify",
		Hook: abi.Hook{When: []string{"completed"}, Webhook: rc.srv.URL + "/in"}}); err != nil || again != nil {
		t.Fatalf("second put: secret %q, %v", again, err)
	}
	r := h.start("steps", map[string]int{"n": 2})
	if r = h.await(r.ID, 30*time.Second); r.Status != store.StatusCompleted {
		t.Fatalf("run %s: %+v", r.Status, r.Error)
	}
	if n := h.engine.DispatchHooks(ctx); n != 1 {
		t.Fatalf("first dispatch made %d attempts, want 1", n)
	}
	var ds []store.HookDelivery
	if err := testenv.Poll(t, 10*time.Second, func() error {
		h.engine.DispatchHooks(ctx)
		ds = h.deliveries(store.DeliveryFilter{RunID: r.ID})
		if len(ds) != 1 || ds[0].Status != store.DeliveryDelivered {
			return fmt.Errorf("deliveries %+v, want one delivered", ds)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	d := ds[0]
	if d.Attempts != 2 || len(d.AttemptLog) != 2 || d.AttemptLog[0].Status != 500 || d.AttemptLog[1].Status != 200 {
		t.Fatalf("delivery %+v, want a 500 then a 200", d)
	}
	got := rc.received()
	if len(got) != 2 {
		t.Fatalf("the server got %d requests, want 2", len(got))
	}
	for i, g := range got {
		verifySignature(t, secret, g.header.Get(engine.HeaderSignature), g.body)
		if g.header.Get(engine.HeaderDelivery) != d.ID || g.header.Get(engine.HeaderAttempt) != strconv.Itoa(i+1) {
			t.Fatalf("request %d headers %v, want delivery %s attempt %d", i, g.header, d.ID, i+1)
		}
	}
	var body struct {
		RunID, Workflow, Status, Hook string
		Output                        struct{ Sum int }
	}
	if err := json.Unmarshal(got[1].body, &body); err != nil {
		t.Fatal(err)
	}
	if body.RunID != r.ID || body.Workflow != "steps" || body.Status != "completed" || body.Hook != "notify" || body.Output.Sum != 1 {
		t.Fatalf("body %s", got[1].body)
	}
	if again := h.await(r.ID, time.Second); again.Status != store.StatusCompleted || string(again.Output) != string(r.Output) || !again.UpdatedAt.Equal(r.UpdatedAt) {
		t.Fatalf("the run changed: %+v", again)
	}

	// A rotated secret signs from then on.
	rotated, err := h.engine.RotateHookSecret(ctx, store.DefaultTenant)
	if err != nil || string(rotated) == string(secret) {
		t.Fatalf("rotate: %q %v", rotated, err)
	}
	r2 := h.start("steps", map[string]int{"n": 1})
	h.await(r2.ID, 30*time.Second)
	h.engine.DispatchHooks(ctx)
	got = rc.received()
	if len(got) != 3 {
		t.Fatalf("the server got %d requests, want 3", len(got))
	}
	verifySignature(t, rotated, got[2].header.Get(engine.HeaderSignature), got[2].body)
}

// A webhook the tenant's outbound policy refuses is refused when it is set, and, set anyway
// (the policy changed since, or a module declared it), recorded failed at its first delivery
// with the refusal; nothing reaches the server and the run is unchanged.
func TestWebhookRefusedByPolicy(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t)
	h := setup(t, harnessOptions{allowPrivateHosts: true, hookPoll: time.Hour,
		limits: store.Limits{AllowedHosts: []string{"https://hooks.example.com"}}, secretKeys: testenv.SecretKeys(t)})
	h.deploy("examples.wasm", false)
	ctx := context.Background()
	_, _, _, err := h.engine.PutHook(ctx, store.DefaultTenant, engine.HookRequest{ID: "out",
		Hook: abi.Hook{When: []string{"completed"}, Webhook: rc.srv.URL}})
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "not in the tenant's outbound allowlist") {
		t.Fatalf("put hook outside the policy: %v", err)
	}
	if _, _, err := h.store.PutHook(ctx, store.Hook{TenantID: store.DefaultTenant, ID: "out", Source: store.HookSourceTenant,
		When: []store.RunStatus{store.StatusCompleted}, URL: rc.srv.URL}); err != nil {
		t.Fatal(err)
	}
	r := h.start("steps", map[string]int{"n": 1})
	h.await(r.ID, 30*time.Second)
	if n := h.engine.DispatchHooks(ctx); n != 1 {
		t.Fatalf("dispatch made %d attempts, want 1", n)
	}
	ds := h.deliveries(store.DeliveryFilter{RunID: r.ID})
	if len(ds) != 1 || ds[0].Status != store.DeliveryFailed || ds[0].Attempts != 1 || !strings.HasPrefix(ds[0].LastError, abi.CodeHTTPDenied) {
		t.Fatalf("deliveries %+v, want one failed at once by the policy", ds)
	}
	if len(rc.received()) != 0 {
		t.Fatal("the server was reached")
	}
	if got := h.await(r.ID, time.Second); got.Status != store.StatusCompleted {
		t.Fatalf("the run changed: %+v", got)
	}
}

// lostFinish is the real Postgres store whose first run end commits and then loses its
// answer, as when Postgres goes away between the commit and the reply.
type lostFinish struct {
	store.Store
	lost atomic.Bool
}

func (s *lostFinish) Finish(ctx context.Context, l store.Lease, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) error {
	err := s.Store.Finish(ctx, l, status, output, info, guestLog)
	if err == nil && s.lost.CompareAndSwap(false, true) {
		return errLostAnswer
	}
	return err
}

func (s *lostFinish) CommitAndFinish(ctx context.Context, l store.Lease, st store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) error {
	err := s.Store.CommitAndFinish(ctx, l, st, status, output, info, guestLog)
	if err == nil && s.lost.CompareAndSwap(false, true) {
		return errLostAnswer
	}
	return err
}

// A start hook's run is started exactly once although the end that made it lost its answer
// (the engine hears the store failed after the commit); a hook that starts its own workflow
// ends its chain after store.MaxHookChainDepth starts, recorded, instead of looping.
func TestStartHookOnceAcrossALostEnd(t *testing.T) {
	t.Parallel()
	var wrapped *lostFinish
	h := setup(t, harnessOptions{hookPoll: time.Hour, wrapStore: func(s store.Store) store.Store {
		wrapped = &lostFinish{Store: s}
		return wrapped
	}})
	h.deploy("examples.wasm", false)
	ctx := context.Background()
	if _, _, secret, err := h.engine.PutHook(ctx, store.DefaultTenant, engine.HookRequest{ID: "again", Workflow: "steps",
		Hook: abi.Hook{When: []string{"completed"}, Start: &abi.HookStart{Workflow: "steps"}}}); err != nil || secret != nil {
		t.Fatalf("put hook: secret %q, %v", secret, err)
	}
	first := h.start("steps", map[string]int{"n": 1})
	followHookChain(t, h.store, first.ID, "again")
	if !wrapped.lost.Load() {
		t.Fatal("no end lost its answer: the test did not test")
	}
}

// TestStartHookOnceAcrossALostEndEmbedded is TestStartHookOnceAcrossALostEnd on the embedded
// store, through its crash injection: the first write that ends a run commits and then fails
// as if its reply had been lost.
func TestStartHookOnceAcrossALostEndEmbedded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var lost atomic.Bool
	st, eng := embeddedEngine(t, embedded.Config{Faults: func(what string, committed bool) error {
		if committed && strings.HasSuffix(what, "finish run") && lost.CompareAndSwap(false, true) {
			return errLostAnswer
		}
		return nil
	}}, engine.Config{HookPoll: time.Hour, PollInterval: time.Second, LeaseFor: 3 * time.Second}, "examples.wasm")
	if _, _, _, err := eng.PutHook(ctx, store.DefaultTenant, engine.HookRequest{ID: "again", Workflow: "steps",
		Hook: abi.Hook{When: []string{"completed"}, Start: &abi.HookStart{Workflow: "steps"}}}); err != nil {
		t.Fatal(err)
	}
	first, _, err := eng.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	followHookChain(t, st, first.ID, "again")
	if !lost.Load() {
		t.Fatal("no end lost its answer: the test did not test")
	}
}

// followHookChain follows a chain of runs each started by the start hook hookID of the one
// before, from firstID: each run completes, its one delivery started the next (keyed by the
// ended run and the hook), until the delivery past store.MaxHookChainDepth is recorded failed;
// the workflow then has exactly the runs of the chain, none started twice.
func followHookChain(t *testing.T, st store.Store, firstID, hookID string) {
	t.Helper()
	ctx := context.Background()
	awaitRun := func(id string) store.Run {
		var r store.Run
		if err := testenv.Poll(t, 30*time.Second, func() error {
			var err error
			if r, err = st.GetRun(ctx, store.DefaultTenant, id); err != nil {
				return err
			}
			if r.Status != store.StatusCompleted {
				return fmt.Errorf("run %s is %s (%+v)", id, r.Status, r.Error)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return r
	}
	id := firstID
	for depth := 1; ; depth++ {
		awaitRun(id)
		ds, err := st.ListDeliveries(ctx, store.DefaultTenant, store.DeliveryFilter{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 1 {
			t.Fatalf("run %s (depth %d): deliveries %+v, want one", id, depth, ds)
		}
		if depth > store.MaxHookChainDepth {
			if ds[0].Status != store.DeliveryFailed || !strings.HasPrefix(ds[0].LastError, "hook_chain_too_deep") {
				t.Fatalf("the delivery past the bound: %+v", ds[0])
			}
			break
		}
		if ds[0].Status != store.DeliveryDelivered || ds[0].Depth != depth {
			t.Fatalf("depth %d: %+v", depth, ds[0])
		}
		next := awaitRun(ds[0].StartedRunID)
		if next.IdempotencyKey != "hook:"+id+":"+hookID {
			t.Fatalf("started run's key %q", next.IdempotencyKey)
		}
		id = next.ID
	}
	runs, _, err := st.ListRuns(ctx, store.DefaultTenant, store.RunFilter{Workflow: "steps", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != store.MaxHookChainDepth+1 {
		t.Fatalf("%d runs of steps, want the first and %d started by hooks, each once", len(runs), store.MaxHookChainDepth)
	}
}

// Two dispatchers (two hosts' Executors on one store) dispatching at once never hold one
// delivery together: the server holds each request until one from each is in flight, so the
// two are proved to overlap, and every delivery arrives exactly once.
func TestTwoDispatchersNeverShareADelivery(t *testing.T) {
	t.Parallel()
	const deliveries = 40
	var (
		mu       sync.Mutex
		seen     = map[string]int{}
		inFlight int
		overlap  atomic.Bool
		both     = make(chan struct{})
		once     sync.Once
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(engine.HeaderDelivery)
		mu.Lock()
		seen[id]++
		inFlight++
		if inFlight >= 2 {
			overlap.Store(true)
			once.Do(func() { close(both) })
		}
		mu.Unlock()
		select {
		case <-both:
		case <-time.After(10 * time.Second): // one dispatcher alone: the test fails below
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	limits := store.Limits{AllowedHosts: []string{srv.URL}}
	// Both dispatchers hold the keyring, as every daemon on one database must: the signing
	// secret is sealed with it.
	keys := testenv.SecretKeys(t)
	h := setup(t, harnessOptions{allowPrivateHosts: true, hookPoll: time.Hour, noStart: true, limits: limits, secretKeys: keys})
	digest := h.deploy("examples.wasm", false).Module.Digest
	ctx := context.Background()
	if _, _, _, err := h.engine.PutHook(ctx, store.DefaultTenant, engine.HookRequest{ID: "w",
		Hook: abi.Hook{When: []string{"cancelled"}, Webhook: srv.URL}}); err != nil {
		t.Fatal(err)
	}
	for range deliveries {
		endACancelledRun(t, h.store, store.DefaultTenant, digest)
	}
	other, err := engine.New(engine.Config{Store: h.store, Runtime: runtimeForTests(t), AllowPrivateHosts: true,
		HookPoll: time.Hour, TenantDefaults: limits, Logger: slog.New(slog.DiscardHandler), SecretKeys: keys})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	attempts := make([]int, 2)
	for i, x := range []*engine.Engine{h.engine, other} {
		wg.Add(1)
		go func() { defer wg.Done(); attempts[i] = x.DispatchHooks(ctx) }()
	}
	wg.Wait()
	if !overlap.Load() {
		t.Fatal("the two dispatchers never had a request in flight at once: the test did not test")
	}
	if attempts[0]+attempts[1] != deliveries || attempts[0] == 0 || attempts[1] == 0 {
		t.Fatalf("attempts %v, want %d between the two, each some", attempts, deliveries)
	}
	if len(seen) != deliveries {
		t.Fatalf("%d deliveries reached the server, want %d", len(seen), deliveries)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("delivery %s arrived %d times", id, n)
		}
	}
	if ds := h.deliveries(store.DeliveryFilter{Status: store.DeliveryDelivered, Limit: 100}); len(ds) != deliveries {
		t.Fatalf("%d deliveries recorded delivered, want %d", len(ds), deliveries)
	}
}
