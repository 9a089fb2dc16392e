package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/postgres"
)

// TestOutboundMetricLabelsAreTheAllowlist: whatever a guest writes as a host, the metric's
// host label is the allowlist entry that let the request through, or refused, or invalid: a
// guest cannot invent label values, and one destination spelled three ways is one series.
func TestOutboundMetricLabelsAreTheAllowlist(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "http://elsewhere.example/", http.StatusFound)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	t.Cleanup(srv.Close)
	entry := "http://" + strings.TrimPrefix(srv.URL, "http://")

	ctx := context.Background()
	st, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: testenv.Schema(t, "wfhost_engine"), MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	eng, err := engine.New(engine.Config{Store: st, Runtime: runtimeForTests(t), Metrics: reg, LeaseFor: 3 * time.Second,
		PollInterval: time.Second, AllowPrivateHosts: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Stop)
	if _, _, _, err := eng.CreateTenant(ctx, "labels", store.Limits{AllowedHosts: []string{entry}}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Deploy(ctx, "labels", fixture(t, "capabilities.wasm"), false); err != nil {
		t.Fatal(err)
	}
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	for _, in := range []map[string]any{
		{"url": srv.URL + "/hello"},
		{"url": srv.URL + "/away"}, // a response, then a refused hop
		{"url": "http://ALLOWED.EXAMPLE:" + port + "/", "raw": true},
		{"url": "http://allowed.example.:" + port + "/", "raw": true},
		{"url": "http://[::1%25x.allowed.example]:" + port + "/", "raw": true},
		{"url": "http://127.0.0.1:" + port + "/", "raw": true, "method": "GET\r\nX-Injected: 1"},
		{"url": "http://invented-" + strings.Repeat("x", 40) + ".example/", "raw": true},
		{"url": srv.URL + "/hello", "outside": true},
	} {
		raw, _ := json.Marshal(in)
		if _, err := eng.StartAndAwait(ctx, "labels", engine.StartRequest{Workflow: "http-fetch", Input: raw}); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "wfhost_outbound_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[labels["host"]+" "+labels["outcome"]] += m.GetCounter().GetValue()
		}
	}
	want := map[string]float64{
		entry + " response": 2, // /hello, and /away's first hop
		"refused refused":   4, // /away's second hop, ALLOWED.EXAMPLE (allowed.example is not listed), invented, outside a step
		"invalid refused":   3, // a trailing dot, a zone id, a CRLF method
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("wfhost_outbound_requests_total by host and outcome: %v, want %v", got, want)
	}
}

// TestMaxHTTPRedirectsReachesTheHost: Config.MaxHTTPRedirects (wfhost run --http-max-redirects)
// bounds the redirects a step's request follows; without it the host's default applies.
func TestMaxHTTPRedirectsReachesTheHost(t *testing.T) {
	t.Parallel()
	// /r/N redirects to /r/N-1; /r/0 answers.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := strings.TrimPrefix(r.URL.Path, "/r/"); n != "0" {
			http.Redirect(w, r, fmt.Sprintf("/r/%c", n[0]-1), http.StatusFound)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	fetch := func(redirects int) store.Run {
		t.Helper()
		st, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: testenv.Schema(t, "wfhost_engine"), MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		eng, err := engine.New(engine.Config{Store: st, Runtime: runtimeForTests(t), LeaseFor: 3 * time.Second,
			PollInterval: time.Second, AllowPrivateHosts: true, MaxHTTPRedirects: redirects})
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(eng.Stop)
		if _, _, _, err := eng.CreateTenant(ctx, "redirects", store.Limits{AllowedHosts: []string{srv.URL}}); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Deploy(ctx, "redirects", fixture(t, "capabilities.wasm"), false); err != nil {
			t.Fatal(err)
		}
		run, err := eng.StartAndAwait(ctx, "redirects", engine.StartRequest{Workflow: "http-fetch", Input: json.RawMessage(`{"url":"` + srv.URL + `/r/2"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	if run := fetch(1); run.Status != store.StatusFailed || run.Error == nil || !strings.Contains(run.Error.Message, "more than 1 redirects") {
		t.Fatalf("two redirects with MaxHTTPRedirects 1: %s %s %+v", run.Status, run.Output, run.Error)
	}
	if run := fetch(0); run.Status != store.StatusCompleted || !strings.Contains(string(run.Output), "hello") {
		t.Fatalf("two redirects with the default bound: %s %s %+v", run.Status, run.Output, run.Error)
	}
}

// TestAStepTimeoutCancelsTheRequestInFlight: a step whose attempt times out while its guest
// waits on an outbound request has that request cancelled (the server sees its context end)
// and its attempt journaled as timed out (ABI.md §4.4).
func TestAStepTimeoutCancelsTheRequestInFlight(t *testing.T) {
	t.Parallel()
	srv, _, cancelled := slowServer(t)
	h := setup(t, harnessOptions{allowPrivateHosts: true, limits: store.Limits{AllowedHosts: []string{srv.URL}}})
	h.deploy("capabilities.wasm", false)
	run := h.start("http-fetch", map[string]any{"url": srv.URL + "/slow", "timeoutMs": 300})
	r := h.await(run.ID, settle)
	if r.Status != store.StatusFailed || r.Error == nil || r.Error.Code != "timeout" {
		t.Fatalf("run %s %+v, want failed with the step's timeout", r.Status, r.Error)
	}
	if !<-cancelled {
		t.Fatal("the server's request ran its course: the timeout did not cancel it")
	}
	steps := h.steps(run.ID)
	if len(steps) != 1 || steps[0].Status != store.StepFailed || steps[0].Error == nil || steps[0].Error.Code != "timeout" ||
		steps[0].Error.Message != "the step's attempt ran past its timeout of 300ms" {
		t.Fatalf("journal %+v, want the fetch step failed with its timeout", steps)
	}
}

// slowServer answers a request after 30 s unless its context ends first. arrived gets a value
// when a request arrives; aborted tells whether its context ended (the client gave up).
func slowServer(t *testing.T) (srv *httptest.Server, arrived <-chan struct{}, aborted <-chan bool) {
	in, out := make(chan struct{}, 1), make(chan bool, 1)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The first request is the one reported; a later one (a retry) must not block.
		select {
		case in <- struct{}{}:
		default:
		}
		aborted := false
		select {
		case <-r.Context().Done():
			aborted = true
		case <-time.After(30 * time.Second):
			fmt.Fprint(w, "too late")
		}
		select {
		case out <- aborted:
		default:
		}
	}))
	t.Cleanup(srv.Close)
	return srv, in, out
}
