package engine_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestHookMetrics: webhook attempts against a real server show in a scrape of /metrics with
// their exact counts by outcome (a 2xx delivered, a 500 retried, a policy refusal failed),
// their durations and run-end-to-delivery latencies, and the outbox gauges follow the store:
// the pending deliveries by tenant, and how long the most overdue one has waited when no
// dispatcher takes it. Before, none of this was measured.
func TestHookMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rc := newReceiver(t, http.StatusInternalServerError, http.StatusInternalServerError)
	reg := prometheus.NewRegistry()
	// Not started, so that only the test dispatches; a failed attempt waits an hour.
	h := setup(t, harnessOptions{metrics: reg, noStart: true, allowPrivateHosts: true, hookPoll: time.Hour, hookBackoff: time.Hour,
		limits: store.Limits{AllowedHosts: []string{rc.srv.URL}}, secretKeys: testenv.SecretKeys(t), runStatesInterval: time.Nanosecond})
	o := &obsHarness{harness: h, reg: reg}
	digest := h.deploy("examples.wasm", false).Module.Digest
	if _, _, _, err := h.engine.PutHook(ctx, store.DefaultTenant, engine.HookRequest{ID: "ok",
		Hook: abi.Hook{When: []string{"cancelled"}, Webhook: rc.srv.URL + "/in"}}); err != nil {
		t.Fatal(err)
	}
	cancelRun := func() {
		t.Helper()
		endACancelledRun(t, h.store, store.DefaultTenant, digest)
	}
	const (
		pending   = "wfhost_hook_outbox_pending{tenant=default}"
		overdue   = "wfhost_hook_outbox_overdue_seconds{tenant=default}"
		delivered = "wfhost_hook_deliveries_total{kind=webhook,outcome=delivered,tenant=default}"
		retried   = "wfhost_hook_deliveries_total{kind=webhook,outcome=retried,tenant=default}"
		failed    = "wfhost_hook_deliveries_total{kind=webhook,outcome=failed,tenant=default}"
		attempts  = "wfhost_hook_attempt_duration_seconds_count{tenant=default}"
		latency   = "wfhost_hook_delivery_latency_seconds_count{tenant=default}"
	)
	want := func(when string, exp map[string]float64) map[string]float64 {
		t.Helper()
		got := series(o.scrape())
		for k, v := range exp {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v", when, k, got[k], v)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
		return got
	}
	want("before any end", map[string]float64{pending: 0, overdue: 0, delivered: 0, retried: 0, failed: 0, attempts: 0, latency: 0})

	for range 3 {
		cancelRun()
	}
	want("three ends", map[string]float64{pending: 3, delivered: 0})
	if n := h.engine.DispatchHooks(ctx); n != 3 {
		t.Fatalf("dispatch made %d attempts, want 3", n)
	}
	// The server answered 500, 500, then 200: two wait an hour for their next attempt.
	want("one dispatch", map[string]float64{pending: 2, overdue: 0, delivered: 1, retried: 2, failed: 0, attempts: 3, latency: 1})
	if len(rc.received()) != 3 {
		t.Fatalf("the server got %d requests, want 3", len(rc.received()))
	}

	// A webhook the policy refuses fails at once, beside a delivered one of the same end.
	if _, _, err := h.store.PutHook(ctx, store.Hook{TenantID: store.DefaultTenant, ID: "refused", Source: store.HookSourceTenant,
		When: []store.RunStatus{store.StatusCancelled}, URL: "https://hooks.example.com/x"}); err != nil {
		t.Fatal(err)
	}
	cancelRun()
	want("an end with two webhooks", map[string]float64{pending: 4})
	h.engine.DispatchHooks(ctx)
	want("the refusal", map[string]float64{pending: 2, delivered: 2, retried: 2, failed: 1, attempts: 5, latency: 2})

	// No dispatcher: a delivery due an hour ago shows as an hour overdue.
	cancelRun()
	conn, err := pgx.Connect(ctx, testenv.DatabaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "UPDATE "+pgx.Identifier{h.schema, "hook_deliveries"}.Sanitize()+
		" SET next_at = now() - interval '1 hour' WHERE status = 'pending' AND attempts = 0"); err != nil {
		t.Fatal(err)
	}
	got := want("two left due an hour ago", map[string]float64{pending: 4})
	if got[overdue] < 3600 || got[overdue] > 3600+600 {
		t.Fatalf("%s = %v, want about an hour", overdue, got[overdue])
	}
	h.engine.DispatchHooks(ctx)
	want("dispatched", map[string]float64{pending: 2, overdue: 0, delivered: 3, failed: 2, attempts: 7})
}
