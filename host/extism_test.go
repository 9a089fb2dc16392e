package host_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
)

// extismFixtures are the Extism plug-ins built from examples/wasm/extism-*: the conformance
// workflows of examples/wasm/go through the Extism door.
//
// The tests that instantiate them are not parallel with the package's other tests: they run
// first, on their own. A standard Go plug-in costs tens of milliseconds of CPU to instantiate
// under -race, and beside the hostile guests' tests on a loaded two-core machine it pushed
// those past their 3 s wall-time bounds.
var extismFixtures = []string{"extism_go.wasm", "extism_as.wasm"}

// TestExtismModulesAreDetectedAndRun: a module that imports extism:host/env is loaded through
// the Extism adapter, describes the same workflows as the native examples, and runs and
// replays them on the same Handler.
func TestExtismModulesAreDetectedAndRun(t *testing.T) {
	for _, fixture := range extismFixtures {
		t.Run(fixture, func(t *testing.T) {
			t.Parallel()
			m := load(t, fixture)
			if !m.Extism || m.ABIVersion != abi.Version {
				t.Fatalf("module %+v: want an Extism module of ABI version %d", m, abi.Version)
			}
			var names []string
			for _, w := range m.Description.Workflows {
				names = append(names, w.Name+"@"+w.Version)
			}
			if got := strings.Join(names, ","); !strings.HasPrefix(got, "onboarding@1,poll@1,relay@1,order-saga@1,steps@1") || !strings.HasSuffix(got, "timeouts@1,charge-or-pause@1,child@1,parent@1,parallel@1,digest@1") {
				t.Fatalf("workflows %s", got)
			}
			if native := load(t, "examples.wasm"); native.Extism {
				t.Fatal("the native examples were taken for an Extism module")
			}

			h := newMemHandler()
			first, err := activate(t, m, "steps", "run-1", `{"n":5}`, h, host.Limits{})
			if err != nil || string(first.Output) != `{"sum":10}` {
				t.Fatalf("first pass: %s %v", first.Output, err)
			}
			if strings.Join(h.ran, ",") != "s,s#1,s#2,s#3,s#4" {
				t.Fatalf("first pass ran %v", h.ran)
			}
			h.replay()
			second, err := activate(t, m, "steps", "run-1", `{"n":5}`, h, host.Limits{})
			if err != nil || string(second.Output) != `{"sum":10}` || len(h.ran) != 0 {
				t.Fatalf("replay: %s %v, ran %v", second.Output, err, h.ran)
			}

			// A suspension unwinds the plug-in in the middle of a host call; the next pass
			// runs on a fresh one and carries on from the journal.
			sh := &sleepyHandler{memHandler: newMemHandler(), slept: map[string]bool{}}
			for passes := 1; ; passes++ {
				res, err := activate(t, m, "poll", "r3", `{"until":3,"intervalMs":1}`, sh, host.Limits{})
				if errors.Is(err, errSuspended) && passes < 3 {
					sh.replay()
					continue
				}
				if err != nil || string(res.Output) != `{"checks":3}` || passes != 3 {
					t.Fatalf("poll after %d passes: %s %v", passes, res.Output, err)
				}
				break
			}

			res, err := activate(t, m, "no-such-workflow", "r4", `{}`, newMemHandler(), host.Limits{})
			if err != nil || res.Error == nil || res.Error.Code != "unknown_workflow" {
				t.Fatalf("unknown workflow: %+v %v", res, err)
			}
		})
	}
}

// TestExtismDeterminism: outside steps an Extism plug-in sees the journal's clock and the
// run's random stream, as a native module does; inside a step, real ones.
func TestExtismDeterminism(t *testing.T) {
	m := load(t, "extism_go.wasm")
	observe := func(runID string) (observed, *memHandler) {
		h := newMemHandler()
		res, err := activate(t, m, "determinism", runID, `{}`, h, host.Limits{})
		if err != nil || res.Error != nil {
			t.Fatalf("determinism: %v %+v", err, res.Error)
		}
		var o observed
		if err := json.Unmarshal(res.Output, &o); err != nil {
			t.Fatal(err)
		}
		return o, h
	}
	a, ha := observe("run-a")
	b, _ := observe("run-a")
	c, _ := observe("run-c")
	if a.Now != journalStart.UnixNano() || a.Elapsed != 0 {
		t.Fatalf("outside steps the clock reads %d (elapsed %d), want the journal's %d", a.Now, a.Elapsed, journalStart.UnixNano())
	}
	if a.Now != b.Now || a.MathRand != b.MathRand || a.CryptoRand != b.CryptoRand || fmtSlice(a.MapOrder) != fmtSlice(b.MapOrder) {
		t.Fatalf("two passes of one run saw different values outside steps:\n%+v\n%+v", a, b)
	}
	if a.CryptoRand == c.CryptoRand {
		t.Fatal("two runs drew the same random numbers")
	}
	if a.Step.CryptoRand == b.Step.CryptoRand || a.Step.Now <= a.Now {
		t.Fatalf("inside a step the clock and random source should be real: %+v %+v", a.Step, b.Step)
	}
	if a.AfterStep != ha.clock.UnixNano() {
		t.Fatalf("after the step the clock reads %d, want the step's journal time %d", a.AfterStep, ha.clock.UnixNano())
	}
}

// capHandler adds tenant secrets and an audit trail to memHandler.
// TestExtismHTTPFollowsTheTenantPolicy: the http_request verb works from an Extism step under
// the tenant's allowlist and private-address rule, and secrets are redacted from what the step
// returns.
func TestExtismHTTPFollowsTheTenantPolicy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("hello " + r.Header.Get("Authorization")))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	m := load(t, "extism_go.wasm")
	fetch := func(input string, pol *host.Outbound) (host.Result, *capHandler, error) {
		h := &capHandler{memHandler: newMemHandler(), secrets: map[string]string{"token": "s3cr3t-value"}}
		res, err := runtime(t).Activate(context.Background(), m, host.Activation{Workflow: "http-fetch", Input: json.RawMessage(input),
			RunID: "r", Handler: h, Outbound: pol})
		return res, h, err
	}
	in, _ := json.Marshal(map[string]any{"url": srv.URL + "/x?key=1", "secret": "token"})
	allowed := &host.Outbound{AllowHosts: []string{u.Host}, AllowPrivate: true}

	res, h, err := fetch(string(in), allowed)
	if err != nil || res.Error != nil || string(res.Output) != `{"status":200,"body":"hello Bearer [redacted]"}` {
		t.Fatalf("allowed request: %s %+v %v", res.Output, res.Error, err)
	}
	if len(h.audit) != 1 || h.audit[0].Status != 200 || h.audit[0].Step != "fetch" {
		t.Fatalf("audit trail %+v", h.audit)
	}

	for name, pol := range map[string]*host.Outbound{
		"no policy":       nil,
		"not on the list": {AllowHosts: []string{"example.com"}, AllowPrivate: true},
		"private address": {AllowHosts: []string{u.Host}},
	} {
		res, _, err := fetch(string(in), pol)
		if err != nil || res.Error == nil || res.Error.Code != abi.CodeHTTPDenied {
			t.Errorf("%s: %s %+v %v, want the run failed with %s", name, res.Output, res.Error, err, abi.CodeHTTPDenied)
		}
	}
}

// TestExtismOwnHTTP: Extism's own HTTP (the PDK's pdk.NewHTTPRequest(...).Send(), which calls
// extism:host/env http_request, http_status_code and http_headers) goes through the tenant's
// outbound policy: an allowed request gives the guest its status, body and headers and is
// audited; one the policy refuses, or one outside a step, ends the pass with the host's code,
// a message without the query string, and (for the policy's refusals) an audit record.
func TestExtismOwnHTTP(t *testing.T) {
	slowDone := make(chan struct{})
	defer close(slowDone)
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Reply", "yes")
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		_, _ = fmt.Fprintf(w, "hello %s %s %s", r.Method, body, r.Header.Get("X-Test"))
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
	mux.HandleFunc("/redirect-in", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/hello", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	loopback := "127.0.0.1"
	if u, _ := url.Parse(srv.URL); u.Hostname() != loopback {
		t.Fatalf("test server on %s", u.Hostname())
	}
	const query = "?key=s3cr3t-in-query"
	m := load(t, "extism_go.wasm")
	entry := strings.TrimPrefix(srv.URL, "http://") // 127.0.0.1:port: an entry without a port allows only 80 and 443
	open := &host.Outbound{AllowHosts: []string{entry}, AllowPrivate: true, MaxResponseBytes: 5000, Timeout: 300 * time.Millisecond}
	fetch := func(input map[string]any, pol *host.Outbound, limits host.Limits) (host.Result, *capHandler, error) {
		h := &capHandler{memHandler: newMemHandler()}
		in, _ := json.Marshal(input)
		res, err := runtime(t).Activate(context.Background(), m, host.Activation{Workflow: "extism-http", Input: in,
			RunID: "r", Handler: h, Outbound: pol, Limits: limits, Logger: slog.New(slog.DiscardHandler)})
		return res, h, err
	}

	for _, path := range []string{"/hello", "/redirect-in"} {
		res, h, err := fetch(map[string]any{"url": srv.URL + path + query, "method": "POST", "body": "ping", "headers": map[string]string{"X-Test": "t1"}}, open, host.Limits{})
		var got struct {
			Status  int               `json:"status"`
			Body    string            `json:"body"`
			Headers map[string]string `json:"headers"`
		}
		if err != nil || res.Error != nil || json.Unmarshal(res.Output, &got) != nil {
			t.Fatalf("%s: allowed request: %s %+v %v", path, res.Output, res.Error, err)
		}
		wantBody := "hello POST ping t1"
		if path == "/redirect-in" {
			wantBody = "hello GET  t1" // a 302 turns the POST into a GET without a body
		}
		if got.Status != 200 || got.Body != wantBody || got.Headers["x-reply"] != "yes" || got.Headers["x-multi"] != "a,b" {
			t.Fatalf("%s: the guest got %+v", path, got)
		}
		// One record per hop: /redirect-in is a 302 to /hello, which the host follows.
		hops := 1
		if path == "/redirect-in" {
			hops = 2
		}
		if len(h.audit) != hops || h.audit[0].Method != "POST" || h.audit[0].Host != loopback || h.audit[0].Path != path ||
			h.audit[0].Step != "fetch" || h.audit[0].BytesOut != 4 || h.audit[0].Error != "" || h.audit[0].Rule != entry {
			t.Fatalf("%s: audit trail %+v", path, h.audit)
		}
		last := h.audit[hops-1]
		if last.Status != 200 || last.Path != "/hello" || last.BytesIn == 0 || last.Hop != hops-1 || last.RequestID != h.audit[0].RequestID {
			t.Fatalf("%s: the last hop's record %+v", path, last)
		}
		if path == "/redirect-in" && (h.audit[0].Status != http.StatusFound || h.audit[1].Method != "GET" || h.audit[1].BytesOut != 0) {
			t.Fatalf("%s: the redirect's records %+v", path, h.audit)
		}
	}

	cases := []struct {
		name     string
		policy   *host.Outbound
		input    map[string]any
		wantCode string
		contains string
		records  int // in the audit trail: every attempt is, one record per hop
		limits   host.Limits
	}{
		{"no policy", nil, map[string]any{"url": srv.URL + "/hello" + query}, abi.CodeHTTPDenied, "not enabled", 1, host.Limits{}},
		{"host not allowed", &host.Outbound{AllowHosts: []string{"api.example.com"}, AllowPrivate: true}, map[string]any{"url": srv.URL + "/hello" + query},
			abi.CodeHTTPDenied, "allowlist", 1, host.Limits{}},
		{"private address", &host.Outbound{AllowHosts: []string{entry}}, map[string]any{"url": srv.URL + "/hello" + query}, abi.CodeHTTPDenied, "not public", 1, host.Limits{}},
		{"redirect to a denied host", open, map[string]any{"url": srv.URL + "/redirect-out" + query}, abi.CodeHTTPDenied, "evil.example.net", 2, host.Limits{}},
		{"oversized request", &host.Outbound{AllowHosts: []string{entry}, AllowPrivate: true, MaxRequestBytes: 2},
			map[string]any{"url": srv.URL + "/hello" + query, "method": "POST", "body": "ping"}, abi.CodeHTTPTooLarge, "4 bytes", 1, host.Limits{}},
		{"oversized response", open, map[string]any{"url": srv.URL + "/big" + query}, abi.CodeHTTPTooLarge, "5000", 1, host.Limits{}},
		{"slow server", open, map[string]any{"url": srv.URL + "/slow" + query}, abi.CodeHTTPTimeout, "time limit", 1, host.Limits{}},
		// The policy's own timeout is 30 s: the activation's wall time ends the request first.
		{"slow server past the activation's deadline", &host.Outbound{AllowHosts: []string{entry}, AllowPrivate: true},
			map[string]any{"url": srv.URL + "/slow" + query}, abi.CodeHTTPTimeout, "time limit", 1, host.Limits{WallTime: 2 * time.Second}},
		{"outside a step", open, map[string]any{"url": srv.URL + "/hello" + query, "outside": true}, abi.CodeOutsideStep, "inside a step", 1, host.Limits{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, h, err := fetch(c.input, c.policy, c.limits)
			var ge *host.GuestError
			if !errors.As(err, &ge) || ge.Info.Code != c.wantCode || !strings.Contains(ge.Info.Message, c.contains) ||
				!strings.Contains(ge.Info.Message, "extism:host/env.http_request") {
				t.Fatalf("%s: %s %+v %v, want the pass ended with %s mentioning %q", c.name, res.Output, res.Error, err, c.wantCode, c.contains)
			}
			if strings.Contains(ge.Info.Message, "s3cr3t") {
				t.Fatalf("the error repeats the query string: %s", ge.Info.Message)
			}
			wantStep := "fetch"
			if c.input["outside"] == true {
				wantStep = ""
			}
			if len(h.audit) != c.records || h.audit[len(h.audit)-1].Error != c.wantCode || h.audit[0].Step != wantStep {
				t.Fatalf("audit trail %+v, want %d records, the last with %s", h.audit, c.records, c.wantCode)
			}
			for _, rec := range h.audit {
				if strings.Contains(fmt.Sprint(rec), "s3cr3t") {
					t.Fatalf("the audit trail holds the query string: %+v", rec)
				}
			}
		})
	}
}

// TestExtismHTTPImportsAreMoved: the compiled form of an Extism module imports Extism's HTTP
// functions from the host's own namespace; nothing else in the binary changes, a module that
// does not import them is compiled as uploaded, and its digest is that of the uploaded bytes.
func TestExtismHTTPImportsAreMoved(t *testing.T) {
	t.Parallel()
	imports := func(http string) []wasmImport {
		return []wasmImport{
			{"extism:host/env", "alloc", []byte{wasmI64}, []byte{wasmI64}},
			{http, "http_request", []byte{wasmI64, wasmI64}, []byte{wasmI64}},
			{"extism:host/user", "http_request", []byte{wasmI64}, []byte{wasmI64}},
			{http, "http_status_code", nil, []byte{wasmI32}},
			{http, "http_headers", nil, []byte{wasmI64}},
		}
	}
	exports := []wasmFunc{{name: "wfhost_abi_version", results: []byte{wasmI32}, body: wasmI32Const(1)}}
	got, err := host.RedirectExtismHTTP(extismModule(imports("extism:host/env"), exports))
	if want := extismModule(imports("wfhost:extism-http"), exports); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("rewritten module (%v):\n got %x\nwant %x", err, got, want)
	}
	plain := extismModule(imports("extism:host/user")[2:3], exports)
	if got, err := host.RedirectExtismHTTP(plain); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("a module without Extism's HTTP changed (%v)", err)
	}

	wasm := readFixture(t, "extism_go.wasm")
	m := load(t, "extism_go.wasm")
	if sum := sha256.Sum256(wasm); m.Digest != hex.EncodeToString(sum[:]) {
		t.Fatalf("digest %s is not the uploaded bytes' %x", m.Digest, sum)
	}
}

// TestExtismLoadRejectsBadModules: an Extism module of the wrong shape is refused at load with
// an error that says what is wrong.
func TestExtismLoadRejectsBadModules(t *testing.T) {
	t.Parallel()
	r := runtime(t)
	exports := func(version int32, run wasmFunc) []wasmFunc {
		return []wasmFunc{
			{name: "wfhost_abi_version", results: []byte{wasmI32}, body: wasmI32Const(version)},
			{name: "wfhost_describe", results: []byte{wasmI32}, body: wasmI32Const(0)},
			run,
		}
	}
	extismRun := wasmFunc{name: "wfhost_run", results: []byte{wasmI32}, body: wasmI32Const(0)}
	cases := map[string]struct {
		wasm []byte
		want string
	}{
		"no exports": {extismModule(nil, nil), "does not export wfhost_abi_version"},
		"native run signature": {extismModule(nil, exports(1, wasmFunc{name: "wfhost_run", params: []byte{wasmI32, wasmI32, wasmI32, wasmI32}})),
			"exports wfhost_run as (i32, i32, i32, i32) -> (), want () -> (i32)"},
		"unknown verb": {extismModule([]wasmImport{{"extism:host/user", "teleport", []byte{wasmI64}, nil}}, exports(1, extismRun)),
			"imports extism:host/user.teleport, which wfhost does not provide"},
		"native verb signature": {extismModule([]wasmImport{{"extism:host/user", "step_run", []byte{wasmI32, wasmI32, wasmI32, wasmI32}, []byte{wasmI64}}}, exports(1, extismRun)),
			"imports extism:host/user.step_run as (i32, i32, i32, i32) -> (i64), want (i64, i64) -> (i64)"},
		"Extism HTTP signature": {extismModule([]wasmImport{{"extism:host/env", "http_request", []byte{wasmI32}, []byte{wasmI64}}}, exports(1, extismRun)),
			"imports extism:host/env.http_request as (i32) -> (i64), want (i64, i64) -> (i64)"},
		"the host's HTTP namespace": {extismModule([]wasmImport{{"wfhost:extism-http", "http_request", []byte{wasmI64, wasmI64}, []byte{wasmI64}}}, exports(1, extismRun)),
			`an Extism module may import only "extism:host/env"`},
		"foreign import": {extismModule([]wasmImport{{"env", "abort", []byte{wasmI32, wasmI32, wasmI32, wasmI32}, nil}}, exports(1, extismRun)),
			`an Extism module may import only "extism:host/env"`},
		"missing kernel function": {extismModule([]wasmImport{{"extism:host/env", "teleport", nil, nil}}, exports(1, extismRun)),
			"instantiate"},
		"wrong version":  {extismModule(nil, exports(7, extismRun)), "module speaks ABI version 7"},
		"no description": {extismModule(nil, exports(1, extismRun)), "describe returned invalid JSON"},
	}
	for name, c := range cases {
		_, err := r.Load(context.Background(), c.wasm)
		if !errors.Is(err, host.ErrInvalidModule) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalidModule mentioning %q", name, err, c.want)
		}
	}
}

// TestExtismVerbsRefuseBadBlocks: a verb's data argument is an Extism block offset; an offset
// past 32 bits traps with a clear abi_violation, and one that is not a live block reads as
// empty data (here an empty step name, which the verb refuses as it would natively).
func TestExtismVerbsRefuseBadBlocks(t *testing.T) {
	t.Parallel()
	for offset, want := range map[int64]string{
		12345:   "step_run: step name is empty",
		1 << 40: "step_run: block offset 1099511627776 is outside Extism's memory",
	} {
		m, err := runtime(t).Load(context.Background(), stepRunModule(offset))
		if err != nil || !m.Extism {
			t.Fatalf("load: %v", err)
		}
		_, err = activate(t, m, "w", "r", `{}`, newMemHandler(), host.Limits{})
		var ge *host.GuestError
		if !errors.As(err, &ge) || ge.Info.Code != abi.CodeABIViolation || !strings.Contains(ge.Info.Message, want) {
			t.Errorf("offset %d: %v, want abi_violation containing %q", offset, err, want)
		}
	}
}

// TestExtismDeadline: a spinning Extism guest is stopped at the activation's wall-time limit
// and the pass ends with deadline_exceeded, as a native one does.
func TestExtismDeadline(t *testing.T) {
	t.Parallel()
	spin := []byte{0x03, 0x40, 0x0c, 0x00, 0x0b} // loop; br 0; end
	m, err := runtime(t).Load(context.Background(), workflowModule(append(spin, wasmI32Const(0)...)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = activate(t, m, "w", "r", `{}`, newMemHandler(), host.Limits{WallTime: 200 * time.Millisecond})
	var ge *host.GuestError
	if !errors.As(err, &ge) || ge.Info.Code != abi.CodeDeadline {
		t.Fatalf("spin: %v, want %s", err, abi.CodeDeadline)
	}
}

// TestExtismErrorSet: an error the guest sets with Extism's error_set fails the pass with code
// trap and its message (ABI.md §9).
func TestExtismErrorSet(t *testing.T) {
	t.Parallel()
	run := append(storeBlock("boom"), 0x20, 0, 0x10, 5) // error_set(local 0)
	m, err := runtime(t).Load(context.Background(), workflowModule(append(run, wasmI32Const(1)...)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = activate(t, m, "w", "r", `{}`, newMemHandler(), host.Limits{})
	var ge *host.GuestError
	if !errors.As(err, &ge) || ge.Info.Code != abi.CodeTrap || !strings.Contains(ge.Info.Message, "boom") {
		t.Fatalf("error_set: %v, want %s with the guest's message", err, abi.CodeTrap)
	}
}

// stepRunModule is an Extism module whose workflow w calls step_run with the given name offset.
func stepRunModule(offset int64) []byte {
	run := append([]byte{0x42}, wasmSLEB(offset)...)
	run = append(run, 0x42, 0, 0x10, 4, 0x1a) // step_run(offset, 0); drop
	return workflowModule(append(run, wasmI32Const(0)...))
}

// workflowModule is an Extism module that describes one workflow, w, whose wfhost_run body is
// run. Its imports, by function index: 1 alloc, 2 store_u8, 3 output_set, 4 step_run,
// 5 error_set.
func workflowModule(run []byte) []byte {
	const outputSet = 3
	desc := `{"workflows":[{"name":"w","version":"1"}]}`
	return extismModule([]wasmImport{
		{"extism:host/env", "alloc", []byte{wasmI64}, []byte{wasmI64}},
		{"extism:host/env", "store_u8", []byte{wasmI64, wasmI32}, nil},
		{"extism:host/env", "output_set", []byte{wasmI64, wasmI64}, nil},
		{"extism:host/user", "step_run", []byte{wasmI64, wasmI64}, []byte{wasmI64}},
		{"extism:host/env", "error_set", []byte{wasmI64}, nil},
	}, []wasmFunc{
		{name: "wfhost_abi_version", results: []byte{wasmI32}, body: wasmI32Const(1)},
		{name: "wfhost_describe", results: []byte{wasmI32}, locals: []byte{wasmI64}, body: append(storeBlock(desc), 0x20, 0, 0x42, byte(len(desc)), 0x10, outputSet, 0x41, 0)},
		{name: "wfhost_run", results: []byte{wasmI32}, locals: []byte{wasmI64}, body: run},
	})
}

// storeBlock is code that copies s into a new kernel block whose offset it leaves in local 0
// (imports as in workflowModule; s shorter than 64 bytes).
func storeBlock(s string) []byte {
	const alloc, storeU8 = 1, 2
	body := []byte{0x42, byte(len(s)), 0x10, alloc, 0x21, 0} // local 0 = alloc(len)
	for i := range len(s) {
		body = append(body, 0x20, 0, 0x42, byte(i), 0x7c, 0x41) // local 0 + i, i32.const
		body = append(body, wasmSLEB(int64(s[i]))...)
		body = append(body, 0x10, storeU8)
	}
	return body
}

// A minimal wasm encoder for the bad modules above: functions with constant bodies, no
// memory of their own.

const (
	wasmI32 = 0x7f
	wasmI64 = 0x7e
)

type wasmImport struct {
	module, name    string
	params, results []byte
}

type wasmFunc struct {
	name            string
	params, results []byte
	locals          []byte // one local of each type listed
	body            []byte // instructions, without the final end
}

func wasmI32Const(v int32) []byte { return append([]byte{0x41}, wasmSLEB(int64(v))...) }

// extismModule imports extism:host/env input_length (which makes it an Extism module), then
// imports, and defines and exports funcs.
func extismModule(imports []wasmImport, funcs []wasmFunc) []byte {
	imports = append([]wasmImport{{"extism:host/env", "input_length", nil, []byte{wasmI64}}}, imports...)
	var types, imps, fns, exps, code []byte
	ntypes := 0
	addType := func(params, results []byte) int {
		types = append(types, 0x60)
		types = append(types, wasmVec(params)...)
		types = append(types, wasmVec(results)...)
		ntypes++
		return ntypes - 1
	}
	for _, im := range imports {
		imps = append(imps, wasmStr(im.module)...)
		imps = append(imps, wasmStr(im.name)...)
		imps = append(imps, 0x00)
		imps = append(imps, wasmULEB(uint64(addType(im.params, im.results)))...)
	}
	for i, f := range funcs {
		fns = append(fns, wasmULEB(uint64(addType(f.params, f.results)))...)
		exps = append(exps, wasmStr(f.name)...)
		exps = append(exps, 0x00)
		exps = append(exps, wasmULEB(uint64(len(imports)+i))...)
		body := wasmULEB(uint64(len(f.locals)))
		for _, t := range f.locals {
			body = append(body, 1, t)
		}
		body = append(body, f.body...)
		body = append(body, 0x0b)
		code = append(code, wasmULEB(uint64(len(body)))...)
		code = append(code, body...)
	}
	out := []byte("\x00asm\x01\x00\x00\x00")
	section := func(id byte, count int, body []byte) {
		content := append(wasmULEB(uint64(count)), body...)
		out = append(out, id)
		out = append(out, wasmULEB(uint64(len(content)))...)
		out = append(out, content...)
	}
	section(1, ntypes, types)
	section(2, len(imports), imps)
	section(3, len(funcs), fns)
	section(7, len(funcs), exps)
	section(10, len(funcs), code)
	return out
}

func wasmVec(b []byte) []byte { return append(wasmULEB(uint64(len(b))), b...) }

func wasmStr(s string) []byte { return wasmVec([]byte(s)) }

func wasmULEB(v uint64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			out = append(out, c|0x80)
			continue
		}
		return append(out, c)
	}
}

func wasmSLEB(v int64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

// TestExtismInstancesAreReused: after the first activation an Extism plug-in's instance is
// reset and reused (no instantiation), including after passes unwound mid-call by a
// suspension, and what a workflow observes outside steps on a reused instance is what it
// observes on a fresh one.
func TestExtismInstancesAreReused(t *testing.T) {
	pooled := newRuntime(t, 4)
	for _, fixture := range extismFixtures {
		m, err := pooled.Load(context.Background(), readFixture(t, fixture))
		if err != nil {
			t.Fatal(err)
		}
		res, first, err := activateOn(t, pooled, m, "steps", "r1", `{"n":3}`, newMemHandler(), host.Limits{})
		if err != nil || string(res.Output) != `{"sum":3}` || first.Instantiate == 0 || first.MemoryBytes == 0 {
			t.Fatalf("%s: first activation: %s %v %+v", fixture, res.Output, err, first)
		}
		res, again, err := activateOn(t, pooled, m, "steps", "r2", `{"n":4}`, newMemHandler(), host.Limits{})
		if err != nil || string(res.Output) != `{"sum":6}` || again.Instantiate != 0 {
			t.Fatalf("%s: second activation (should reuse): %s %v %+v", fixture, res.Output, err, again)
		}
		h := &sleepyHandler{memHandler: newMemHandler(), slept: map[string]bool{}}
		for passes := 1; ; passes++ {
			res, st, err := activateOn(t, pooled, m, "poll", "r3", `{"until":3,"intervalMs":1}`, h, host.Limits{})
			if st.Instantiate != 0 {
				t.Fatalf("%s: pass %d instantiated instead of reusing", fixture, passes)
			}
			if errors.Is(err, errSuspended) && passes < 3 {
				h.replay()
				continue
			}
			if err != nil || string(res.Output) != `{"checks":3}` || passes != 3 {
				t.Fatalf("%s: poll after %d passes: %s %v", fixture, passes, res.Output, err)
			}
			break
		}
	}

	fresh := newRuntime(t, -1)
	seen := func(r *host.Runtime, warm bool) observed {
		m, err := r.Load(context.Background(), readFixture(t, "extism_go.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if warm {
			if _, _, err := activateOn(t, r, m, "steps", "warm", `{"n":1}`, newMemHandler(), host.Limits{}); err != nil {
				t.Fatal(err)
			}
		}
		res, st, err := activateOn(t, r, m, "determinism", "run-a", `{}`, newMemHandler(), host.Limits{})
		if err != nil || res.Error != nil || warm != (st.Instantiate == 0) {
			t.Fatalf("determinism (warm %v): %v %+v %+v", warm, err, res.Error, st)
		}
		var o observed
		if err := json.Unmarshal(res.Output, &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	a, b := seen(fresh, false), seen(pooled, true)
	if a.Now != b.Now || a.MathRand != b.MathRand || a.CryptoRand != b.CryptoRand || fmtSlice(a.MapOrder) != fmtSlice(b.MapOrder) {
		t.Fatalf("fresh and reused instances saw different values outside steps:\n%+v\n%+v", a, b)
	}
}

// TestExtismConcurrentActivations: activations of one plug-in on many goroutines share its
// compiled code and idle instances, never an instance.
func TestExtismConcurrentActivations(t *testing.T) {
	r := newRuntime(t, 2)
	for _, fixture := range extismFixtures {
		m, err := r.Load(context.Background(), readFixture(t, fixture))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				in := `{"n":` + strconv.Itoa(i) + `}`
				want := `{"sum":` + strconv.Itoa(i*(i-1)/2) + `}`
				res, _, err := activateOn(t, r, m, "steps", "r"+strconv.Itoa(i), in, newMemHandler(), host.Limits{})
				if err != nil || string(res.Output) != want {
					t.Errorf("%s steps %s: %s %v", fixture, in, res.Output, err)
				}
			}()
		}
		wg.Wait()
	}
}
