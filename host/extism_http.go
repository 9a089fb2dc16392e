package host

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
)

// Extism's own HTTP (the kernel's http_request, http_status_code and http_headers, which the
// PDKs' HTTP helpers call) through the tenant's outbound policy. go-sdk serves them itself with
// http.DefaultClient and a hostname glob, and offers no hook to do otherwise, so the module
// compiled for go-sdk imports them from extismHTTPModule instead, served here by sendHTTP
// (outbound.go), as the http_request verb is (RATIONALE.md, "The Extism door").

// extismHTTPModule is the import module Extism's HTTP functions are moved to in the compiled
// form of an Extism module. An uploaded module may not import it (checkExtismShape).
const extismHTTPModule = "wfhost:extism-http"

// extismHTTPImports are the kernel functions moved to extismHTTPModule, with go-sdk's
// signatures: http_request(request, body i64) -> body i64; http_status_code() -> i32;
// http_headers() -> headers i64.
var extismHTTPImports = map[string]signature{
	"http_request":     {[]api.ValueType{i64, i64}, []api.ValueType{i64}},
	"http_status_code": {nil, []api.ValueType{i32}},
	"http_headers":     {nil, []api.ValueType{i64}},
}

// maxExtismHTTPRequestBytes bounds the request JSON (URL, method, headers; the body is a
// block of its own), as the native verb gives its headers and URL 64 KiB.
const maxExtismHTTPRequestBytes = 64 << 10

// redirectExtismHTTP returns wasm with its function imports of extismHTTPImports from
// ExtismEnvModule imported from extismHTTPModule instead. Only the import section changes:
// those module names and the section's size; every other byte is kept. A module that imports
// none of them is returned as it is.
func redirectExtismHTTP(wasm []byte) ([]byte, error) {
	secs, err := sections(wasm)
	if err != nil {
		return nil, err
	}
	for _, sec := range secs {
		if sec.id != sectionImport {
			continue
		}
		section := wasm[sec.start:sec.end]
		entries, countEnd, err := importEntries(section)
		if err != nil {
			return nil, fmt.Errorf("import section: %w", err)
		}
		body := slices.Clone(section[:countEnd])
		changed := false
		for _, e := range entries {
			if _, ok := extismHTTPImports[e.name]; ok && e.kind == 0x00 && e.module == ExtismEnvModule {
				body = appendULEB(body, uint64(len(extismHTTPModule)))
				body = append(body, extismHTTPModule...)
				body = append(body, section[e.modEnd:e.end]...)
				changed = true
				continue
			}
			body = append(body, section[e.from:e.end]...)
		}
		if !changed {
			return wasm, nil
		}
		out := make([]byte, 0, len(wasm)+len(body)-len(section)+8)
		out = append(out, wasm[:sec.pos]...)
		out = append(out, sectionImport)
		out = appendULEB(out, uint64(len(body)))
		out = append(out, body...)
		return append(out, wasm[sec.end:]...), nil
	}
	return wasm, nil
}

// extismHTTPKey finds an activation's extismLastResponse in the context of its host calls.
type extismHTTPKey struct{}

// extismLastResponse is what http_status_code and http_headers report: the last response
// Extism's http_request received in this activation. go-sdk keeps it on the plug-in instance;
// here it lives and dies with the activation, so a reused instance never shows one run
// another's response.
type extismLastResponse struct {
	status  int32
	headers []byte // a JSON object: lower-case names, values joined with ","; nil: none
}

// withExtismHTTP gives an activation's host calls a place for the last response.
func withExtismHTTP(ctx context.Context) context.Context {
	return context.WithValue(ctx, extismHTTPKey{}, &extismLastResponse{})
}

func lastResponseFrom(ctx context.Context) *extismLastResponse {
	if last, ok := ctx.Value(extismHTTPKey{}).(*extismLastResponse); ok {
		return last
	}
	// Not an activation (describe, initialisation): enter refuses http_request there, and
	// the other two have nothing to report.
	return &extismLastResponse{}
}

// extismHTTPFunctions are Extism's HTTP functions for the compiled form of every Extism
// module, in extismHTTPModule. Errors name them as the guest imported them.
func extismHTTPFunctions() []extism.HostFunction {
	fn := func(name string, f func(c *extismCall, last *extismLastResponse, stack []uint64)) extism.HostFunction {
		sig := extismHTTPImports[name]
		qualified := ExtismEnvModule + "." + name
		h := extism.NewHostFunctionWithStack(name, func(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
			c := &extismCall{ctx: ctx, st: enter(ctx, qualified), cp: cp, mem: cp.Memory(), fn: qualified}
			f(c, lastResponseFrom(ctx), stack)
			c.st.backOnCore(ctx)
		}, sig.params, sig.results)
		h.SetNamespace(extismHTTPModule)
		return h
	}
	return []extism.HostFunction{
		fn("http_request", func(c *extismCall, last *extismLastResponse, stack []uint64) {
			stack[0] = c.httpRequest(last, stack[0], stack[1])
		}),
		fn("http_status_code", func(_ *extismCall, last *extismLastResponse, stack []uint64) {
			stack[0] = api.EncodeI32(last.status)
		}),
		fn("http_headers", func(c *extismCall, last *extismLastResponse, stack []uint64) {
			stack[0] = c.newBlock(last.headers)
		}),
	}
}

// extismHTTPRequest is the request JSON of Extism's http_request; the body is a block of its
// own.
type extismHTTPRequest struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
}

// httpRequest is Extism's http_request under the tenant's policy. It returns the offset of a
// new block holding the response body (0 for an empty body) and keeps the status and headers
// for http_status_code and http_headers. A request that gets no response traps, as Extism's
// does, here with the host's code (refuse). The request and body blocks stay the guest's:
// the PDKs free them themselves.
func (c *extismCall) httpRequest(last *extismLastResponse, reqOffset, bodyOffset uint64) uint64 {
	*last = extismLastResponse{}
	st := c.st
	// The request is read even when it will be refused (outside a step, no policy), so that
	// the audit trail can say what was asked for.
	bounds := st.outbound.withDefaults()
	raw := st.read(c.mem, c.fn, c.block(reqOffset), maxExtismHTTPRequestBytes, "request")
	var er extismHTTPRequest
	if err := json.Unmarshal(raw, &er); err != nil {
		st.violation("%s: request is not valid JSON: %v", c.fn, err)
	}
	req := abi.HTTPRequest{Method: er.Method, URL: er.URL}
	if len(er.Headers) > 0 {
		req.Headers = make(map[string][]string, len(er.Headers))
		for k, v := range er.Headers {
			req.Headers[k] = []string{v}
		}
	}
	body := c.block(bodyOffset)
	if st.inStep && st.outbound != nil && int64(body.n) <= int64(bounds.MaxRequestBytes) {
		req.Body = st.read(c.mem, c.fn, body, bounds.MaxRequestBytes, "body")
	}
	resp, refused := st.sendHTTP(c.ctx, req, int(min(body.n, math.MaxInt32)))
	if refused != nil {
		c.refuse(refused.Code, "%s: %s", c.fn, refused.Message)
	}
	headers := make(map[string]string, len(resp.header))
	for k, vs := range resp.header {
		headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	last.status = int32(resp.status)
	last.headers, _ = json.Marshal(headers)
	return c.newBlock(resp.body)
}

// refuse ends the pass with a GuestError of the host's code, the way Extism ends a request
// that gets no response (a trap), but saying why. Messages never carry the URL, whose query
// string may hold a secret.
func (c *extismCall) refuse(code, format string, args ...any) {
	msg := string(c.st.redact([]byte(fmt.Sprintf(format, args...))))
	c.st.fault = guestError(code, "%s", msg)
	panic(c.st.fault)
}
