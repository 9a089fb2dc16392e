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
