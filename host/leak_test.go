package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// The probe module (examples/wasm/go/probe) reads a secret and writes it where its input says,
// in the encoding its input says. These tests run it on the host alone, with a handler that
// keeps everything the host hands it: what the engine would store.

// Two secrets: plain characters, and every character a writer escapes or frames text with.
const (
	plainSecret = "sk_live_4f9a0c27d1e6b835"
	wildSecret  = `"qu<o>te&\back é😀 = 'tick' 9e3b`
)

// recorder is a Handler that journals like memHandler and keeps every value the host hands it.
type recorder struct {
	*capHandler
	mu      sync.Mutex
	written []string // step outputs and errors, names, wait options, audit records
}

func newRecorder(secrets map[string]string) *recorder {
	return &recorder{capHandler: &capHandler{memHandler: newMemHandler(), secrets: secrets}}
}

func (r *recorder) keep(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.written = append(r.written, fmt.Sprintf(format, args...))
}

func (r *recorder) StepRun(ctx context.Context, name string, opts abi.StepOptions) (host.Reply, error) {
	r.keep("step %s", name)
	return r.capHandler.StepRun(ctx, name, opts)
}

func (r *recorder) StepDone(ctx context.Context, outcome abi.Outcome, data []byte) (host.Reply, error) {
	r.keep("step_done %d %s", outcome, data)
	return r.capHandler.StepDone(ctx, outcome, data)
}

func (r *recorder) Sleep(ctx context.Context, name string, d time.Duration) (host.Reply, error) {
	r.keep("sleep %s", name)
	return r.capHandler.Sleep(ctx, name, d)
}

func (r *recorder) WaitEvent(ctx context.Context, name string, opts abi.WaitOptions) (host.Reply, error) {
	o, _ := json.Marshal(opts)
	r.keep("wait %s %s %s %s", name, opts.Event, opts.Match, o)
	return r.capHandler.WaitEvent(ctx, name, opts)
}

func (r *recorder) RecordOutbound(ctx context.Context, rec host.OutboundRecord) {
	path, _ := url.PathUnescape(rec.Path)
	r.keep("outbound %s %s %s %s (%s)", rec.Step, rec.Method, rec.Host, rec.Path, path)
	r.capHandler.RecordOutbound(ctx, rec)
}

// probeRun is one activation of the probe and everything it left.
type probeRun struct {
	rec  *recorder
	res  host.Result
	err  error
	logs string
}

// everything is every text the run left, each JSON value also as its strings decoded.
func (p probeRun) everything() []string {
	out := []string{p.logs, fmt.Sprint(p.res.Error), string(p.res.Output), fmt.Sprint(p.err)}
	out = append(out, p.rec.written...)
	var decoded []string
	for _, s := range out {
		decoded = append(decoded, decodedStrings(s)...)
	}
	return append(out, decoded...)
}

// decodedStrings are the strings and keys of every JSON value found in s (which may be a line
// of text with JSON in it, or JSON lines), decoded.
func decodedStrings(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '{' && s[i] != '[' && s[i] != '"' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var v any
		if dec.Decode(&v) != nil {
			continue
		}
		out = append(out, flatten(v)...)
		i += int(dec.InputOffset()) - 1
	}
	return out
}

func flatten(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, flatten(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for k, e := range v {
			out = append(append(out, k), flatten(e)...)
		}
		return out
	}
	return nil
}

func runProbe(t *testing.T, h *recorder, input map[string]any, policy *host.Outbound) probeRun {
	t.Helper()
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var mu sync.Mutex
	res, err := runtime(t).Activate(context.Background(), load(t, "probe.wasm"), host.Activation{
		Workflow: "probe", Input: in, RunID: "r", Handler: h, Outbound: policy,
		Logger: slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logs}, nil)),
	})
	mu.Lock()
	defer mu.Unlock()
	return probeRun{rec: h, res: res, err: err, logs: logs.String()}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// noSecret fails the test when any text the run left holds the secret.
func noSecret(t *testing.T, p probeRun, secret string) {
	t.Helper()
	for _, s := range p.everything() {
		if strings.Contains(s, secret) {
			t.Fatalf("the secret got through: %q\nin: %s", secret, s)
		}
	}
}

// TestRedactionSeesThroughJSONEscapes: a secret a guest writes in any JSON encoding (every
// character as \u00XX, in upper, lower or mixed case, or JSON's standard escaping) into a step's
// output or error, the run's output or error, or a wait's options is redacted as the store will
// decode it. Before, the host matched only the raw bytes and one escaping.
func TestRedactionSeesThroughJSONEscapes(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{plainSecret, wildSecret} {
		for _, where := range []string{"step-output", "step-error", "run-output", "run-error", "wait-match", "wait-event"} {
			for _, enc := range []string{"raw", "std", "u", "u-mixed"} {
				if secret == wildSecret && enc == "raw" && where != "step-error" && where != "run-error" {
					continue // not JSON; an error that is not JSON is kept as text, and redacted
				}
				t.Run(fmt.Sprintf("%s/%s/%.4s", where, enc, secret), func(t *testing.T) {
					t.Parallel()
					h := newRecorder(map[string]string{"s": secret})
					p := runProbe(t, h, map[string]any{"secret": "s", "where": where, "enc": enc}, nil)
					if p.err != nil {
						t.Fatalf("activation: %v", p.err)
					}
					noSecret(t, p, secret)
					// What was redacted is marked, not dropped.
					if all := strings.Join(p.everything(), "\n"); !strings.Contains(all, abi.Redacted) {
						t.Errorf("no redaction shows: %s", all)
					}
				})
			}
		}
	}
}

// TestNamesAreRedacted: a secret used as a step, sleep or wait name (or a wait's event) is
// redacted in the journal key, and a replay, which reads the step's journaled (redacted)
// output and names the step from it, reaches the same keys.
func TestNamesAreRedacted(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{plainSecret, wildSecret} {
		for _, where := range []string{"step-name", "sleep-name", "wait-name", "wait-event"} {
			t.Run(fmt.Sprintf("%s/%.4s", where, secret), func(t *testing.T) {
				t.Parallel()
				h := newRecorder(map[string]string{"s": secret})
				first := runProbe(t, h, map[string]any{"secret": "s", "where": where, "enc": "std"}, nil)
				if first.err != nil || first.res.Error != nil {
					t.Fatalf("first pass: %+v %v", first.res, first.err)
				}
				noSecret(t, first, secret)
				keys := append([]string(nil), h.written...)
				h.written = nil
				h.replay()
				again := runProbe(t, h, map[string]any{"secret": "s", "where": where, "enc": "std"}, nil)
				if again.err != nil || again.res.Error != nil {
					t.Fatalf("replay: %+v %v", again.res, again.err)
				}
				// The replay runs no step callback: it reaches every name the first pass did,
				// in the same order, from the journal.
				var names, replayed []string
				for _, w := range keys {
					if !strings.HasPrefix(w, "step_done") {
						names = append(names, w)
					}
				}
				replayed = append(replayed, h.written...)
				if strings.Join(names, "\n") != strings.Join(replayed, "\n") {
					t.Fatalf("the replay reached other names:\nfirst:  %q\nreplay: %q", names, replayed)
				}
			})
		}
	}
}

// TestAuditRecordsAreRedacted: a secret in a request's host or path, to a refused or an allowed
// host, as it is or percent-encoded, is redacted in the audit record.
func TestAuditRecordsAreRedacted(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "you asked for %s", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	policy := &host.Outbound{AllowHosts: []string{"127.0.0.1", "*.invalid"}, AllowPrivate: true, Timeout: 2 * time.Second}
	for _, where := range []string{"http-host-refused", "http-host-allowed", "http-path-refused", "http-path-allowed"} {
		for _, enc := range []string{"raw", "pct", "pct-mixed"} {
			for _, secret := range []string{plainSecret, wildSecret} {
				t.Run(fmt.Sprintf("%s/%s/%.4s", where, enc, secret), func(t *testing.T) {
					t.Parallel()
					h := newRecorder(map[string]string{"s": secret})
					pol := policy
					if strings.HasSuffix(where, "refused") {
						pol = &host.Outbound{AllowHosts: []string{"api.example.com"}}
					}
					p := runProbe(t, h, map[string]any{"secret": "s", "where": where, "enc": enc, "url": srv.URL}, pol)
					if p.err != nil || p.res.Error != nil {
						t.Fatalf("run: %+v %v", p.res, p.err)
					}
					if len(h.audit) != 1 {
						t.Fatalf("audit trail: %+v", h.audit)
					}
					noSecret(t, p, secret)
				})
			}
		}
	}
}

// TestLogLinesAreRedactedBeforeTheCut: a secret placed across the 4 KiB cut of a log record,
// an output line or an error line, at every offset, leaves none of its bytes in the log: the
// line is redacted whole, then cut.
func TestLogLinesAreRedactedBeforeTheCut(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{plainSecret, wildSecret} {
		var offsets []int
		for o := 0; o <= len(secret); o++ {
			offsets = append(offsets, o)
		}
		for _, where := range []string{"log", "stdout", "stderr"} {
			t.Run(fmt.Sprintf("%s/%.4s", where, secret), func(t *testing.T) {
				t.Parallel()
				h := newRecorder(map[string]string{"s": secret})
				p := runProbe(t, h, map[string]any{"secret": "s", "where": where, "offsets": offsets}, nil)
				if p.err != nil || p.res.Error != nil {
					t.Fatalf("run: %+v %v", p.res, p.err)
				}
				lines := strings.Count(p.logs, "\n")
				if lines < len(offsets) {
					t.Fatalf("%d log records for %d lines:\n%s", lines, len(offsets), p.logs)
				}
				noSecret(t, p, secret)
				// Not even a part: a prefix of 6 bytes or more is already most of a short key.
				for _, s := range p.everything() {
					for n := 6; n < len(secret); n++ {
						if strings.Contains(s, secret[:n]) {
							t.Fatalf("the log holds the secret's first %d bytes: %q", n, secret[:n])
						}
					}
				}
			})
		}
	}
}

// TestNotStorable: whatever a guest writes reaches the Handler storable (abi.CheckJSON for JSON,
// abi.StorableText for text), or is refused with not_storable: a step output fails the step
// for good, a run output or a wait's match fails the run. Error codes, messages and log lines
// are made storable instead.
func TestNotStorable(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", abi.MaxJSONDepth+1) + strings.Repeat("]", abi.MaxJSONDepth+1)
	unstorable := map[string][]byte{
		"NUL":                 []byte(`{"k": "a\u0000b"}`),
		"lone high surrogate": []byte(`["\ud800"]`),
		"lone low surrogate":  []byte(`"x\udc00"`),
		"invalid UTF-8":       []byte("{\"k\": \"\xff\xfe\"}"),
		"number out of range": []byte(`{"n": 1e1001}`),
		"too deep":            []byte(deep),
	}
	for name, value := range unstorable {
		t.Run("step output/"+name, func(t *testing.T) {
			t.Parallel()
			h := newRecorder(nil)
			p := runProbe(t, h, map[string]any{"raw": value, "where": "step-output"}, nil)
			if p.err != nil || p.res.Error != nil {
				t.Fatalf("the run should go on after its step failed: %+v %v", p.res, p.err)
			}
			var info abi.ErrorInfo
			for _, w := range h.written {
				if data, ok := strings.CutPrefix(w, "step_done 1 "); ok {
					_ = json.Unmarshal([]byte(data), &info)
				}
			}
			if info.Code != abi.CodeNotStorable || !info.NonRetryable {
				t.Fatalf("step error %+v; written %q", info, h.written)
			}
			allStorable(t, h)
		})
		t.Run("run output/"+name, func(t *testing.T) {
			t.Parallel()
			h := newRecorder(nil)
			p := runProbe(t, h, map[string]any{"raw": value, "where": "run-output"}, nil)
			var ge *host.GuestError
			if !errorsAs(p.err, &ge) || ge.Info.Code != abi.CodeNotStorable {
				t.Fatalf("want the run failed with %s: %+v %v", abi.CodeNotStorable, p.res, p.err)
			}
			if abi.CheckJSON([]byte(mustJSON(ge.Info))) != nil {
				t.Fatalf("the run's error is not storable: %+v", ge.Info)
			}
		})
		if value[0] != '{' {
			continue // a match must be an object: anything else is an ABI violation
		}
		t.Run("wait match/"+name, func(t *testing.T) {
			t.Parallel()
			h := newRecorder(nil)
			p := runProbe(t, h, map[string]any{"raw": value, "where": "wait-match"}, nil)
			var ge *host.GuestError
			if !errorsAs(p.err, &ge) || ge.Info.Code != abi.CodeNotStorable {
				t.Fatalf("want the run failed with %s: %+v %v", abi.CodeNotStorable, p.res, p.err)
			}
			allStorable(t, h)
		})
	}
	// Errors and log lines keep the guest's words, made storable.
	badError := []byte("{\"code\": \"c\\u0000ode\\ud800\", \"message\": \"bad \xff bytes \\u0000\", \"details\": {\"k\": \"\\u0000\"}, \"nonRetryable\": true}")
	badText := []byte("a NUL \x00 and a broken \xff byte")
	for _, where := range []string{"step-error", "run-error", "log", "stdout", "stderr"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			h := newRecorder(nil)
			raw := badError
			if !strings.HasSuffix(where, "error") {
				raw = badText
			}
			p := runProbe(t, h, map[string]any{"raw": raw, "where": where}, nil)
			if p.err != nil {
				t.Fatalf("activation: %v", p.err)
			}
			allStorable(t, h)
			switch where {
			case "run-error":
				info := p.res.Error
				if info == nil || info.Code != "c\uFFFDode\uFFFD" || info.Message != "bad \uFFFD bytes \uFFFD" || info.Details != nil {
					t.Fatalf("run error %+v", info)
				}
				if abi.CheckJSON([]byte(mustJSON(*info))) != nil {
					t.Fatalf("the run's error is not storable: %+v", info)
				}
			case "step-error":
				if !strings.Contains(strings.Join(h.written, "\n"), `"code":"c`+"\uFFFD"+`ode`) {
					t.Fatalf("step error: %q", h.written)
				}
			default:
				if !strings.Contains(p.logs, "a NUL \uFFFD and a broken \uFFFD byte") {
					t.Fatalf("log: %s", p.logs)
				}
			}
		})
	}
}

// allStorable fails the test when a JSON value the host handed the Handler is not storable.
func allStorable(t *testing.T, h *recorder) {
	t.Helper()
	for _, w := range h.written {
		if data, ok := strings.CutPrefix(w, "step_done 0 "); ok && abi.CheckJSON([]byte(data)) != nil {
			t.Fatalf("a step output reached the handler unstorable: %q", w)
		}
		if data, ok := strings.CutPrefix(w, "step_done 1 "); ok && abi.CheckJSON([]byte(data)) != nil {
			t.Fatalf("a step error reached the handler unstorable: %q", w)
		}
		if abi.StorableText(w) != w {
			t.Fatalf("text reached the handler unstorable: %q", w)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func errorsAs(err error, target **host.GuestError) bool { return errors.As(err, target) }

// TestFaultMessagesAreRedacted: a run that breaks the ABI with a secret in what it wrote (here
// a step name that holds a "/") fails with a message that names the fault, not the secret.
func TestFaultMessagesAreRedacted(t *testing.T) {
	t.Parallel()
	const secret = "sk/live/4f9a0c27d1e6"
	h := newRecorder(map[string]string{"s": secret})
	p := runProbe(t, h, map[string]any{"secret": "s", "where": "step-name"}, nil)
	var ge *host.GuestError
	if !errorsAs(p.err, &ge) || ge.Info.Code != abi.CodeABIViolation || !strings.Contains(ge.Info.Message, `contains "/"`) {
		t.Fatalf("want an ABI violation about the name: %+v %v", p.res, p.err)
	}
	noSecret(t, p, secret)
}
