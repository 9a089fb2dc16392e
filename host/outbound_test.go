package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
)

// capHandler is memHandler with the capability extensions: secrets, and an audit trail.
type capHandler struct {
	*memHandler
	secrets map[string]string
	mu      sync.Mutex
	audit   []host.OutboundRecord
}

func (h *capHandler) Secret(_ context.Context, name string) ([]byte, bool, error) {
	v, ok := h.secrets[name]
	return []byte(v), ok, nil
}

func (h *capHandler) RecordOutbound(_ context.Context, rec host.OutboundRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.audit = append(h.audit, rec)
}

// logSink keeps every log record's message and attributes as text.
type logSink struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

const theSecret = "sk_live_s3cr3t-value"

// fetchCase is one run of a capabilities fixture's http-fetch workflow (in every guest
// language: a request inside a step, optionally with a secret as bearer token, or outside
// one) under a policy, and how it must end: failed with wantCode mentioning contains, or,
// when wantCode is "", with a response the test checks for contains.
type fetchCase struct {
	name     string
	policy   *host.Outbound
	input    map[string]any
	wantCode string
	contains string
}

// runFetch runs c on m with a handler holding the secret "stripe", checks that a refusal ends
// the run with its code and message and that a response ends it without an error, and
// returns the handler (its journal and audit trail) and the result.
func runFetch(t *testing.T, m *host.Module, c fetchCase) (*capHandler, host.Result) {
	t.Helper()
	h := &capHandler{memHandler: newMemHandler(), secrets: map[string]string{"stripe": theSecret}}
	in, _ := json.Marshal(c.input)
	res, err := runtime(t).Activate(context.Background(), m, host.Activation{Workflow: "http-fetch", Input: in, RunID: "r",
		Handler: h, Logger: slog.New(slog.DiscardHandler), Outbound: c.policy})
	if err != nil {
		t.Fatalf("activation: %v", err)
	}
	if c.wantCode == "" && res.Error != nil {
		t.Fatalf("want a response: output %s error %+v", res.Output, res.Error)
	}
	if c.wantCode != "" && (res.Error == nil || res.Error.Code != c.wantCode || !strings.Contains(res.Error.Message, c.contains)) {
		t.Fatalf("want %s mentioning %q: output %s error %+v", c.wantCode, c.contains, res.Output, res.Error)
	}
	return h, res
}

func TestOutboundHTTP(t *testing.T) {
	t.Parallel()
	var slowDone = make(chan struct{})
	t.Cleanup(func() { close(slowDone) })
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s auth=%s", r.Method, r.Header.Get("Authorization"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 10000)))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-slowDone:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/redirect-out", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://evil.example.net/steal", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	loopback := "127.0.0.1"
	if u, _ := url.Parse(srv.URL); u.Hostname() != loopback {
		t.Fatalf("test server on %s", u.Hostname())
	}
	m := load(t, "capabilities.wasm")
	open := &host.Outbound{AllowHosts: []string{loopback}, AllowPrivate: true, MaxResponseBytes: 5000, Timeout: 300 * time.Millisecond}

	cases := []fetchCase{
		{"allowed", open, map[string]any{"url": srv.URL + "/hello", "method": "POST"}, "", "hello POST"},
		{"no policy", nil, map[string]any{"url": srv.URL + "/hello"}, abi.CodeHTTPDenied, "not enabled"},
		{"host not allowed", &host.Outbound{AllowHosts: []string{"api.example.com"}, AllowPrivate: true}, map[string]any{"url": srv.URL + "/hello"}, abi.CodeHTTPDenied, "allowlist"},
		{"private address", &host.Outbound{AllowHosts: []string{loopback}}, map[string]any{"url": srv.URL + "/hello"}, abi.CodeHTTPDenied, "not public"},
		{"redirect to a denied host", open, map[string]any{"url": srv.URL + "/redirect-out"}, abi.CodeHTTPDenied, "evil.example.net"},
		{"oversized response", open, map[string]any{"url": srv.URL + "/big"}, abi.CodeHTTPTooLarge, "5000"},
		{"slow server", open, map[string]any{"url": srv.URL + "/slow"}, abi.CodeHTTPTimeout, "time limit"},
		{"outside a step", open, map[string]any{"url": srv.URL + "/hello", "outside": true}, abi.CodeOutsideStep, "inside a step"},
		{"not http", open, map[string]any{"url": "file:///etc/passwd"}, abi.CodeHTTPDenied, "http or https"},
		{"credentials in the URL", open, map[string]any{"url": "http://user:pw@" + loopback + "/hello"}, abi.CodeHTTPDenied, "credentials"},
		{"secret as a bearer token", open, map[string]any{"url": srv.URL + "/hello", "secret": "stripe"}, "", "auth=Bearer [redacted]"},
		{"missing secret", open, map[string]any{"url": srv.URL + "/hello", "secret": "nope"}, abi.CodeSecretNotFound, "nope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, res := runFetch(t, m, c)
			if c.wantCode == "" && !strings.Contains(string(res.Output), c.contains) {
				t.Fatalf("want a response containing %q: output %s", c.contains, res.Output)
			}
			for _, rec := range h.audit {
				if strings.Contains(fmt.Sprint(rec), theSecret) {
					t.Fatalf("the audit trail holds the secret: %+v", rec)
				}
			}
			if c.name == "allowed" && (len(h.audit) != 1 || h.audit[0].Status != 200 || h.audit[0].Method != "POST" ||
				h.audit[0].Host != loopback || h.audit[0].Path != "/hello" || h.audit[0].Step != "fetch" || h.audit[0].BytesIn == 0) {
				t.Fatalf("audit: %+v", h.audit)
			}
			if (c.wantCode == abi.CodeHTTPDenied || c.wantCode == abi.CodeHTTPTimeout) && c.name != "no policy" && (len(h.audit) != 1 || h.audit[0].Error != c.wantCode) {
				t.Fatalf("a refused request is not in the audit trail as %s: %+v", c.wantCode, h.audit)
			}
		})
	}
}

// TestSecretsAreRedacted: a step that logs, prints and returns a secret, and a run that fails
// with it, leave no trace of its value in the journal, the logs or the run's error.
func TestSecretsAreRedacted(t *testing.T) {
	t.Parallel()
	m := load(t, "capabilities.wasm")
	h := &capHandler{memHandler: newMemHandler(), secrets: map[string]string{"db": theSecret}}
	logs := &logSink{}
	res, err := runtime(t).Activate(context.Background(), m, host.Activation{Workflow: "secret-leak", Input: json.RawMessage(`{"Name":"db"}`),
		RunID: "r", Handler: h, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	journal := string(h.journal["leak"])
	for what, text := range map[string]string{"journal": journal, "logs": logs.String(), "run error": fmt.Sprint(res.Error)} {
		if strings.Contains(text, theSecret) {
			t.Errorf("the %s holds the secret: %s", what, text)
		}
		if !strings.Contains(text, "[redacted]") {
			t.Errorf("the %s shows no redaction: %s", what, text)
		}
	}
}
