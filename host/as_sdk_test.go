package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
)

// The AssemblyScript guest SDK (guest-sdk/assemblyscript) through the real host: its example
// module testdata/examples_as.wasm (measured beside the other guests in guests_bench_test.go), and
// testdata/capabilities_as.wasm (examples/wasm/assemblyscript/capabilities) for what the
// engine's conformance suite does not reach: capabilities, JSON round trips, aborts, input
// errors. Both are built from source by testdata/build-assemblyscript.sh.

// The AssemblyScript examples declare exactly what the Go examples declare.
func TestASDescribesLikeGo(t *testing.T) {
	t.Parallel()
	as, goMod := load(t, "examples_as.wasm"), load(t, "examples.wasm")
	if !reflect.DeepEqual(as.Description, goMod.Description) {
		t.Fatalf("descriptions differ\n  as: %+v\n  go: %+v", as.Description, goMod.Description)
	}
}

// Input of the wrong shape fails the run with invalid_input naming the field, as the Go SDK's
// decoder does.
func TestASInvalidInput(t *testing.T) {
	t.Parallel()
	m := load(t, "examples_as.wasm")
	for input, want := range map[string]string{
		`{"n":"three"}`: `decode workflow input: field "n": want a number, got string`,
		`{"n":1.5}`:     `decode workflow input: field "n": want an integer, got number`,
		`[1,2]`:         `decode workflow input: want an object, got array`,
	} {
		res, err := activate(t, m, "steps", "r", input, newMemHandler(), host.Limits{})
		if err != nil || res.Error == nil || res.Error.Code != "invalid_input" || res.Error.Message != want {
			t.Errorf("%s: result %+v error %v; want invalid_input %q", input, res, err, want)
		}
	}
	res, err := activate(t, m, "no-such", "r", `{}`, newMemHandler(), host.Limits{})
	if err != nil || res.Error == nil || res.Error.Code != "unknown_workflow" {
		t.Fatalf("unknown workflow: result %+v error %v", res, err)
	}
}

// Every JSON value survives the SDK's parser and serializer: the input, journaled as a step's
// output and returned as the run's, decodes to what was sent.
func TestASJSONRoundTrip(t *testing.T) {
	t.Parallel()
	m := load(t, "capabilities_as.wasm")
	docs := []string{
		`null`, `true`, `0`, `-0.5`, `1e21`, `1.5e-7`, `123456789012`, `9007199254740993`, `-17`,
		`"plain"`, `""`, `"quote \" backslash \\ slash \/ tab \t newline \n cr \r bs \b ff \f"`,
		`"\u0001\u001f control"`, // \u0000 is not storable (ABI.md §5): TestNotStorable `"é ü ß 日本 emoji 😀 \ud83d\ude00"`, `"<html> & 'x'"`,
		`[]`, `{}`, `[1,[2,[3,[4]]],{"a":[]}]`,
		`{"b":1,"a":{"nested":{"deep":[true,false,null]}},"empty":"","num":3.25}`,
		` { "spaced" : [ 1 , 2 ] } `,
		`{"dup":1,"dup":2}`,
	}
	// Objects past the size from which the SDK indexes keys, with a repeated key among them.
	var big strings.Builder
	big.WriteString(`{`)
	for i := range 200 {
		fmt.Fprintf(&big, `"k%d":[%d,"v%d"],`, i, i, i)
	}
	big.WriteString(`"k7":"last wins"}`)
	docs = append(docs, big.String())
	for _, doc := range docs {
		h := newMemHandler()
		res, err := activate(t, m, "json-echo", "r", doc, h, host.Limits{})
		if err != nil || res.Error != nil {
			t.Errorf("%s: result %+v error %v", doc, res, err)
			continue
		}
		want := decodeAny(t, json.RawMessage(doc))
		if got := decodeAny(t, res.Output); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: output %s decodes to %#v, want %#v", doc, res.Output, got, want)
		}
		if got := decodeAny(t, h.journal["echo"]); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: journaled %s", doc, h.journal["echo"])
		}
	}
}

func decodeAny(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// stepDoneRecorder keeps what the guest reported from each step callback.
type stepDoneRecorder struct {
	*memHandler
	done []string
}

func (h *stepDoneRecorder) StepDone(ctx context.Context, outcome abi.Outcome, data []byte) (host.Reply, error) {
	h.done = append(h.done, fmt.Sprintf("%d %s", outcome, data))
	return h.memHandler.StepDone(ctx, outcome, data)
}

// An abort (a throw, a failed bounds check) inside a step callback is that attempt's failure
// with code panic; when the step has failed for good, and for an abort in the workflow body,
// the pass traps with the reason from the guest's stderr.
func TestASAbort(t *testing.T) {
	t.Parallel()
	m := load(t, "capabilities_as.wasm")
	h := &stepDoneRecorder{memHandler: newMemHandler()}
	_, err := activate(t, m, "abort-in-step", "r", `{}`, h, host.Limits{})
	var ge *host.GuestError
	if !errors.As(err, &ge) || ge.Info.Code != abi.CodeTrap ||
		!strings.Contains(ge.Info.Message, "step explode failed: abort: exploded on attempt 1 in capabilities/index.ts") {
		t.Fatalf("abort in a step: %v", err)
	}
	if len(h.done) != 1 || !strings.HasPrefix(h.done[0], `1 {"code":"panic","message":"step panicked: abort: exploded on attempt 1`) {
		t.Fatalf("step_done calls: %q", h.done)
	}

	_, err = activate(t, m, "abort-outside", "r", `{"index":5}`, newMemHandler(), host.Limits{})
	if !errors.As(err, &ge) || ge.Info.Code != abi.CodeTrap || !strings.Contains(ge.Info.Message, "abort: Index out of range in ~lib/array.ts") {
		t.Fatalf("abort in the workflow body: %v", err)
	}
	// The instance that trapped is not reused in a broken state: the next pass runs normally.
	if res, err := activate(t, m, "abort-outside", "r", `{"index":0}`, newMemHandler(), host.Limits{}); err != nil || string(res.Output) != "0" {
		t.Fatalf("after a trap: result %+v error %v", res, err)
	}
}

// A code the step's retry policy lists as non-retryable reaches the host marked nonRetryable,
// and the run fails with the step's error, as the Go SDK words it.
func TestASNonRetryableCodes(t *testing.T) {
	t.Parallel()
	m := load(t, "capabilities_as.wasm")
	h := &stepDoneRecorder{memHandler: newMemHandler()}
	res, err := activate(t, m, "non-retryable", "r", `{}`, h, host.Limits{})
	if err != nil || res.Error == nil || res.Error.Code != "bad_card" || res.Error.Message != "step charge failed: bad_card: attempt 1" {
		t.Fatalf("result %+v error %v", res, err)
	}
	if len(h.done) != 1 || h.done[0] != `1 {"code":"bad_card","message":"attempt 1","nonRetryable":true}` {
		t.Fatalf("step_done calls: %q", h.done)
	}
}

// The AssemblyScript module's http-fetch and secret-leak behave as the Go module's do in
// TestOutboundHTTP and TestSecretsAreRedacted: the host's refusals come back with its codes.
func TestASOutboundHTTP(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "hello %s auth=%s body=%s", r.Method, r.Header.Get("Authorization"), body)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	m := load(t, "capabilities_as.wasm")
	open := &host.Outbound{AllowHosts: []string{strings.TrimPrefix(srv.URL, "http://")}, AllowPrivate: true, Timeout: 5 * time.Second}
	cases := []fetchCase{
		{"allowed", open, map[string]any{"url": srv.URL + "/hello", "method": "POST", "body": "héllo wörld"}, "", `hello POST auth= body=héllo wörld`},
		{"no policy", nil, map[string]any{"url": srv.URL + "/hello"}, abi.CodeHTTPDenied, "not enabled"},
		{"host not allowed", &host.Outbound{AllowHosts: []string{"api.example.com"}, AllowPrivate: true}, map[string]any{"url": srv.URL + "/hello"}, abi.CodeHTTPDenied, "allowlist"},
		{"outside a step", open, map[string]any{"url": srv.URL + "/hello", "outside": true}, abi.CodeOutsideStep, "inside a step"},
		{"secret as a bearer token", open, map[string]any{"url": srv.URL + "/hello", "secret": "stripe"}, "", "auth=Bearer [redacted]"},
		{"missing secret", open, map[string]any{"url": srv.URL + "/hello", "secret": "nope"}, abi.CodeSecretNotFound, "nope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, res := runFetch(t, m, c)
			if c.wantCode != "" {
				return
			}
			var out struct {
				Status int
				Body   string
			}
			if json.Unmarshal(res.Output, &out) != nil || out.Status != 200 || !strings.Contains(out.Body, c.contains) {
				t.Fatalf("want status 200 and a body containing %q: output %s", c.contains, res.Output)
			}
		})
	}
}

func TestASSecretsAreRedacted(t *testing.T) {
	t.Parallel()
	m := load(t, "capabilities_as.wasm")
	h := &capHandler{memHandler: newMemHandler(), secrets: map[string]string{"db": theSecret}}
	logs := &logSink{}
	res, err := runtime(t).Activate(context.Background(), m, host.Activation{Workflow: "secret-leak", Input: json.RawMessage(`{"Name":"db"}`),
		RunID: "r", Handler: h, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"journal": string(h.journal["leak"]), "logs": logs.String(), "run error": fmt.Sprint(res.Error)} {
		if strings.Contains(text, theSecret) || !strings.Contains(text, "[redacted]") {
			t.Errorf("the %s is not redacted: %s", what, text)
		}
	}
}

// nowMs and random read the host's deterministic clock and random stream (ABI.md §6): in the
// workflow body they are the journal's time and the run's seeded stream, equal on a replay.
func TestASClockAndRandom(t *testing.T) {
	t.Parallel()
	m := load(t, "capabilities_as.wasm")
	type sample struct {
		Now    int64
		Random float64
	}
	type out struct{ Body, Step sample }
	h := newMemHandler()
	var passes []out
	for range 2 {
		h.replay()
		res, err := activate(t, m, "clock", "run-1", `{}`, h, host.Limits{})
		var o out
		if err != nil || res.Error != nil || json.Unmarshal(res.Output, &o) != nil {
			t.Fatalf("result %+v error %v", res, err)
		}
		passes = append(passes, o)
	}
	if passes[0] != passes[1] {
		t.Fatalf("a replay saw other values: %+v then %+v", passes[0], passes[1])
	}
	b := passes[0].Body
	if b.Now != journalStart.UnixMilli() || b.Random < 0 || b.Random >= 1 {
		t.Fatalf("body: %+v, want now %d and random in [0,1)", b, journalStart.UnixMilli())
	}
	if s := passes[0].Step; s.Now <= journalStart.UnixMilli() || s.Random < 0 || s.Random >= 1 {
		t.Fatalf("step callback: %+v, want real time and random in [0,1)", s)
	}
	other, err := activate(t, m, "clock", "run-2", `{}`, newMemHandler(), host.Limits{})
	if err != nil || other.Error != nil {
		t.Fatalf("run-2: %+v %v", other, err)
	}
	var o out
	_ = json.Unmarshal(other.Output, &o)
	if o.Body.Random == b.Random {
		t.Fatalf("two runs drew the same random number %v", b.Random)
	}
}

// FuzzASJSON: whatever bytes a run's input holds, the SDK's parser agrees with Go's
// encoding/json: valid JSON comes back (through a journaled step) as the same value, anything
// else fails the run with invalid_input, never with a trap.
func FuzzASJSON(f *testing.F) {
	for _, seed := range []string{`{"a":[1,2.5,-3e-7,"x\u00e9\ud83d\ude00"],"b":{"c":null,"d":true}}`, `"\ud800"`, `1e400`,
		`12345678901234567890`, `[`, `{"a" 1}`, `"\x01"`, `01`, `-`, `1.`, `tru`, "\xff", `"\xc3\xa9"`, ` [ ] `, `{"a":1,}`} {
		f.Add(seed)
	}
	m := load(f, "capabilities_as.wasm")
	f.Fuzz(func(t *testing.T, input string) {
		if input == "" {
			return // the host sends an empty input as null
		}
		res, err := activate(t, m, "json-echo", "r", input, newMemHandler(), host.Limits{})
		if err != nil {
			t.Fatalf("%q: %v", input, err)
		}
		var want any
		if !json.Valid([]byte(input)) {
			if res.Error == nil || res.Error.Code != "invalid_input" {
				t.Fatalf("%q is not JSON, yet: output %s error %+v", input, res.Output, res.Error)
			}
			return
		}
		if json.Unmarshal([]byte(input), &want) != nil {
			return // valid syntax Go cannot hold, such as 1e400
		}
		if res.Error != nil {
			t.Fatalf("%q: %+v", input, res.Error)
		}
		var got any
		if err := json.Unmarshal(res.Output, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q came back as %s (%v)", input, res.Output, err)
		}
	})
}
