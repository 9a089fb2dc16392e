package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
)

// The Rust SDK's capability wrappers (guest-sdk/rust, StepContext::http and ::secret) against
// the real host functions: testdata/capabilities_rust.wasm, built from
// examples/wasm/rust/capabilities, makes requests to a loopback server. Refusals must reach
// the workflow as errors with the host's code.
func TestRustCapabilities(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, "hello %s auth=%s len=%d", r.Method, r.Header.Get("Authorization"), r.ContentLength)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 10000)))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	m := load(t, "capabilities_rust.wasm")
	open := &host.Outbound{AllowHosts: []string{strings.TrimPrefix(srv.URL, "http://")}, AllowPrivate: true, MaxResponseBytes: 5000, Timeout: 5 * time.Second}

	cases := []fetchCase{
		{"allowed", open, map[string]any{"url": srv.URL + "/hello", "method": "POST", "body": "ping"}, "", `{"body":"hello POST auth= len=4","status":202}`},
		{"no policy", nil, map[string]any{"url": srv.URL + "/hello"}, abi.CodeHTTPDenied, "step fetch failed: http_denied: "},
		{"private address", &host.Outbound{AllowHosts: []string{strings.TrimPrefix(srv.URL, "http://")}}, map[string]any{"url": srv.URL + "/hello"}, abi.CodeHTTPDenied, "not public"},
		{"oversized response", open, map[string]any{"url": srv.URL + "/big"}, abi.CodeHTTPTooLarge, "5000"},
		{"secret as a bearer token", open, map[string]any{"url": srv.URL + "/hello", "secret": "stripe"}, "", "auth=Bearer [redacted]"},
		{"missing secret", open, map[string]any{"url": srv.URL + "/hello", "secret": "nope"}, abi.CodeSecretNotFound, "nope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, res := runFetch(t, m, c); c.wantCode == "" && !strings.Contains(string(res.Output), c.contains) {
				t.Fatalf("want an output containing %q: output %s", c.contains, res.Output)
			}
		})
	}
}

// A Rust step that logs and returns a secret, and a run that fails with it, leave no trace of
// its value in the journal, the logs or the run's error.
func TestRustSecretsAreRedacted(t *testing.T) {
	t.Parallel()
	m := load(t, "capabilities_rust.wasm")
	h := &capHandler{memHandler: newMemHandler(), secrets: map[string]string{"db": theSecret}}
	logs := &logSink{}
	res, err := runtime(t).Activate(context.Background(), m, host.Activation{Workflow: "secret-leak", Input: json.RawMessage(`{"name":"db"}`),
		RunID: "r", Handler: h, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error == nil || res.Error.Code != "leak" {
		t.Fatalf("want the run failed with code leak: %+v", res)
	}
	for what, text := range map[string]string{"journal": string(h.journal["leak"]), "logs": logs.String(), "run error": res.Error.Message} {
		if strings.Contains(text, theSecret) || !strings.Contains(text, "[redacted]") {
			t.Errorf("the %s is not redacted: %s", what, text)
		}
	}
}

// A panic in Rust cannot unwind (panic=abort): the SDK writes its message to stderr before the
// trap, so that the run's error says what happened, and in a step callback it first ends the
// attempt with the panic as its error (this handler fails the step at once).
func TestRustPanicReachesTheTrapError(t *testing.T) {
	t.Parallel()
	m := load(t, "capabilities_rust.wasm")
	for input, want := range map[string]string{
		`{}`:               "guest stderr: workflow panicked at 'boom outside a step', examples/wasm/rust/capabilities/main.rs:",
		`{"inStep": true}`: "guest stderr: workflow panicked at 'boom on attempt 1', examples/wasm/rust/capabilities/main.rs:",
	} {
		_, err := activate(t, m, "panic", "r", input, newMemHandler(), host.Limits{})
		var ge *host.GuestError
		if !errors.As(err, &ge) || ge.Info.Code != abi.CodeTrap || !strings.Contains(ge.Info.Message, want) {
			t.Errorf("input %s: want a trap whose message has %q, got %v", input, want, err)
		}
	}
}
