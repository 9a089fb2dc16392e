package host

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/internal/defaults"
)

// Outbound is an activation's policy for outbound HTTP. A nil policy refuses every request.
type Outbound struct {
	// AllowHosts is the allowlist (ABI.md §4.11): "api.example.com" exactly, "*.example.com"
	// for any subdomain of example.com (not example.com itself), or an IP literal
	// ("192.0.2.7", "[2001:db8::7]"), each optionally with a scheme ("https://api.example.com")
	// and a port ("api.example.com:8443"). An entry without a port allows https on 443 and
	// http on 80; one without a scheme allows both. A wildcard never matches an IP literal.
	// Deny by default; a malformed entry (CheckAllowedHosts) matches nothing.
	AllowHosts []string
	// AllowPrivate lets requests reach loopback, private, link-local and other non-public
	// addresses. Off, a name that resolves to one is refused, whatever the allowlist says, so
	// a tenant cannot reach the operator's own network.
	AllowPrivate bool
	// MaxRequestBytes bounds a request body; zero takes DefaultOutbound's.
	MaxRequestBytes int
	// MaxResponseBytes bounds a response body; zero takes DefaultOutbound's.
	MaxResponseBytes int
	// Timeout bounds one request, its redirects included; zero takes DefaultOutbound's. A
	// request never outlives the activation.
	Timeout time.Duration
	// MaxRedirects bounds the redirects followed, each checked against the policy; zero takes
	// DefaultOutbound's.
	MaxRedirects int
	// Transport, when set, carries every request instead of the network: the deterministic
	// test harness's fakes (engine/wftest). The allowlist and the limits still apply; the
	// address checks, made when dialling, do not, as nothing is dialled. Nil in a daemon.
	Transport http.RoundTripper
}

// DefaultOutbound returns the value of every zero field of Outbound: the outbound defaults of
// internal/defaults, which the engine and the daemon's flags read too.
func DefaultOutbound() Outbound {
	return Outbound{
		MaxRequestBytes:  defaults.HTTPMaxRequestBytes,
		MaxResponseBytes: defaults.HTTPMaxResponseBytes,
		Timeout:          defaults.HTTPTimeout,
		MaxRedirects:     defaults.HTTPMaxRedirects,
	}
}

// OutboundRecord is one HTTP request as the audit trail keeps it, one record per hop: the
// request the guest asked for (Hop 0) and each redirect the host followed, refused ones
// included. No bodies, no header values, no query string (any of them may carry a secret).
type OutboundRecord struct {
	Step string // "" outside a step callback
	// RequestID links the hops of one request to each other.
	RequestID string
	Hop       int
	Method    string
	Scheme    string // "http" or "https"; "" when the URL had neither
	Host      string // canonical (lowercase); as given, made safe to keep, when Malformed
	Port      int    // 0 when the URL could not be read
	Path      string
	Status    int    // 0 when no response came
	Error     string // an abi.Code* when the request was refused or failed
	BytesOut  int
	BytesIn   int
	Duration  time.Duration
	At        time.Time
	// Rule is the allowlist entry that let this hop through ("" when none did): a bounded
	// name for the destination, which the metrics use instead of the guest's Host.
	Rule string
	// Malformed is set when the guest's method or URL was malformed: Method, Host and Path
	// then hold what it gave made safe to keep (auditText), never the bytes as given.
	Malformed bool
}

// OutboundAuditor, implemented by a Handler, receives every outbound request of the pass.
type OutboundAuditor interface {
	RecordOutbound(ctx context.Context, rec OutboundRecord)
}

// SecretSource, implemented by a Handler, gives step callbacks the tenant's secrets.
type SecretSource interface {
	// Secret returns the named secret; ok=false when there is none.
	Secret(ctx context.Context, name string) (value []byte, ok bool, err error)
}

// withDefaults is the policy with DefaultOutbound's value in every zero field; a nil policy
// gives the defaults (its requests are refused, but their size is still bounded).
func (o *Outbound) withDefaults() Outbound {
	var c Outbound
	if o != nil {
		c = *o
	}
	d := DefaultOutbound()
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = d.MaxRequestBytes
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = d.MaxResponseBytes
	}
	if c.Timeout <= 0 {
		c.Timeout = d.Timeout
	}
	if c.MaxRedirects <= 0 {
		c.MaxRedirects = d.MaxRedirects
	}
	return c
}

// errPrivateAddress is what the dialer says about an address the policy keeps out.
var errPrivateAddress = errors.New("private address")

// publicOnly refuses connections to addresses that are not public unicast. It runs after DNS
// resolution, on the address actually dialled and before the connection is attempted, so a
// public name that resolves to 127.0.0.1 (DNS rebinding) is caught too, and no packet leaves.
func publicOnly(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", errPrivateAddress, address)
	}
	ip := ap.Addr().Unmap()
	if !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() ||
		sharedAddressSpace.Contains(ip) {
		return fmt.Errorf("%w: %s", errPrivateAddress, ip)
	}
	return nil
}

// sharedAddressSpace is RFC 6598's carrier-grade NAT range, not covered by IsPrivate.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// transports are shared by every activation: one that dials only public addresses, one that
// dials any. Each has its own pool of idle connections, so a connection made under one policy
// is never reused under the other. Proxies from the environment are ignored: they would
// bypass the address check.
var transports = map[bool]*http.Transport{
	false: newTransport(publicOnly),
	true:  newTransport(nil),
}

func newTransport(control func(string, string, syscall.RawConn) error) *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: control}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   10,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
	}
}

// capabilityError is a StatusError reply with an ErrorInfo.
func capabilityError(code, format string, args ...any) Reply {
	b, _ := json.Marshal(abi.ErrorInfo{Code: code, Message: fmt.Sprintf(format, args...)})
	return Reply{Status: abi.StatusError, Data: b}
}

func (st *state) httpRequest(ctx context.Context, mem api.Memory, reqArg span) Reply {
	// The request is read even when it will be refused (outside a step, no policy), so that
	// the audit trail can say what was asked for.
	bounds := st.outbound.withDefaults()
	// Base64 makes a body 4/3 larger; headers and the URL get 64 KiB.
	raw := st.read(mem, abi.FuncHTTPRequest, reqArg, bounds.MaxRequestBytes/3*4+4+64<<10, "request")
	var req abi.HTTPRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		st.violation("%s: request is not valid JSON: %v", abi.FuncHTTPRequest, err)
	}
	return st.doHTTP(ctx, req)
}

// doHTTP makes the request under the policy and replies with the response or why not.
func (st *state) doHTTP(ctx context.Context, req abi.HTTPRequest) Reply {
	resp, refused := st.sendHTTP(ctx, req, len(req.Body))
	if refused != nil {
		b, _ := json.Marshal(refused)
		return Reply{Status: abi.StatusError, Data: b}
	}
	out, _ := json.Marshal(abi.HTTPResponse{Status: resp.status, Headers: resp.header, Body: resp.body})
	return Reply{Status: abi.StatusOK, Data: out}
}

// outboundResponse is a response the policy let through, body read in full.
type outboundResponse struct {
	status int
	header http.Header
	body   []byte
}

// sendHTTP makes the request under the activation's policy and returns the response, or an
// ErrorInfo whose code says why there is none. Every attempt, refused or not, inside a step or
// not, goes to the audit trail, one record per hop. bodyLen is the size of the body the guest
// gave: one over the limit is refused without reading req.Body, which the caller may then
// leave empty. Both transports of outbound HTTP (the http_request verb and Extism's own,
// extism_http.go) come through here.
func (st *state) sendHTTP(ctx context.Context, req abi.HTTPRequest, bodyLen int) (outboundResponse, *abi.ErrorInfo) {
	began := time.Now()
	rec := OutboundRecord{RequestID: newRequestID(), Method: strings.ToUpper(req.Method), At: began.UTC()}
	if st.handler != nil {
		rec.Step = st.handler.CurrentStep()
	}
	if rec.Method == "" {
		rec.Method = http.MethodGet
	}
	hopBegan := began
	refuse := func(code, format string, args ...any) (outboundResponse, *abi.ErrorInfo) {
		rec.Error, rec.Duration = code, time.Since(hopBegan)
		st.audit(ctx, rec)
		return outboundResponse{}, &abi.ErrorInfo{Code: code, Message: fmt.Sprintf(format, args...)}
	}
	methodOK := validMethod(rec.Method)
	if !methodOK {
		rec.Method, rec.Malformed = auditText(req.Method, maxAuditMethodBytes), true
	}
	u, t, urlErr := readURL(req.URL)
	describe(&rec, u, t, urlErr, req.URL)

	// Refusals first that do not depend on the request, then its form, then the policy.
	pol := st.outbound.withDefaults()
	switch {
	case !st.inStep:
		return refuse(abi.CodeOutsideStep, "http_request is allowed only inside a step callback: a request outside one would run again on every replay")
	case st.runCancelled():
		return refuse(abi.CodeCancelled, "the run was cancelled")
	case st.outbound == nil:
		return refuse(abi.CodeHTTPDenied, "outbound HTTP is not enabled for this tenant")
	case urlErr != nil:
		return refuse(abi.CodeHTTPDenied, "%v", urlErr)
	case !methodOK:
		return refuse(abi.CodeHTTPDenied, "the method is not a valid HTTP method (1 to %d letters A-Z)", maxAuditMethodBytes)
	}
	patterns := compileAllowlist(pol.AllowHosts)
	rule, ok := match(patterns, t)
	if !ok {
		return refuse(abi.CodeHTTPDenied, "%s://%s is not in the tenant's outbound allowlist", t.scheme, t.hostport())
	}
	rec.Rule = rule.entry
	if bodyLen > pol.MaxRequestBytes {
		return refuse(abi.CodeHTTPTooLarge, "the request body is %d bytes, the limit is %d", bodyLen, pol.MaxRequestBytes)
	}
	timeout := pol.Timeout
	if req.TimeoutMs > 0 {
		timeout = min(timeout, time.Duration(req.TimeoutMs)*time.Millisecond)
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if asked := st.cancelAsked(); asked != nil {
		// A cancel of the run aborts the request in flight (ABI.md §4.15).
		go func() {
			select {
			case <-asked:
				cancel()
			case <-rctx.Done():
			}
		}()
	}
	// The URL sent is the canonical one the policy matched: a lowercase host.
	u.Host = t.hostport()
	hreq, err := http.NewRequestWithContext(rctx, rec.Method, u.String(), bytes.NewReader(req.Body))
	if err != nil {
		return refuse(abi.CodeHTTPDenied, "the request cannot be made: %v", err)
	}
	for k, vs := range req.Headers {
		for _, v := range vs {
			hreq.Header.Add(k, v)
		}
	}
	rec.BytesOut = len(req.Body)
	var transport http.RoundTripper = transports[pol.AllowPrivate]
	if pol.Transport != nil {
		transport = pol.Transport
	}
	client := &http.Client{
		Transport: transport,
		// Each redirect ends one hop (recorded with the status that redirected) and starts
		// the next, which is checked as the first was.
		CheckRedirect: func(next *http.Request, _ []*http.Request) error {
			rec.Status, rec.Duration = next.Response.StatusCode, time.Since(hopBegan)
			st.audit(ctx, rec)
			hopBegan = time.Now()
			rec = OutboundRecord{Step: rec.Step, RequestID: rec.RequestID, Hop: rec.Hop + 1, Method: next.Method,
				BytesOut: int(max(next.ContentLength, 0)), At: hopBegan.UTC()}
			nt, err := parseTarget(next.URL, next.Response.Header.Get("Location"))
			describe(&rec, next.URL, nt, err, "")
			switch {
			case err != nil:
				return fmt.Errorf("%w: a redirect to a URL the policy refuses: %v", errRedirectDenied, err)
			case rec.Hop > pol.MaxRedirects:
				return fmt.Errorf("%w: more than %d redirects", errRedirectDenied, pol.MaxRedirects)
			}
			rule, ok := match(patterns, nt)
			if !ok {
				return fmt.Errorf("%w: a redirect to %s://%s, which is not in the allowlist", errRedirectDenied, nt.scheme, nt.hostport())
			}
			rec.Rule = rule.entry
			next.URL.Host = nt.hostport()
			return nil
		},
	}
	resp, err := client.Do(hreq)
	if err != nil && st.runCancelled() {
		return refuse(abi.CodeCancelled, "the run was cancelled while the request was in flight")
	}
	if err != nil {
		code, msg := classifyHTTPError(rctx, err)
		return refuse(code, "%s", msg)
	}
	defer resp.Body.Close()
	rec.Status = resp.StatusCode
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(pol.MaxResponseBytes)+1))
	if err != nil && st.runCancelled() {
		return refuse(abi.CodeCancelled, "the run was cancelled while the response was read")
	}
	if err != nil {
		code, msg := classifyHTTPError(rctx, err)
		return refuse(code, "%s", msg)
	}
	rec.BytesIn = len(body)
	if len(body) > pol.MaxResponseBytes {
		return refuse(abi.CodeHTTPTooLarge, "the response body is over the limit of %d bytes", pol.MaxResponseBytes)
	}
	rec.Duration = time.Since(hopBegan)
	st.audit(ctx, rec)
	return outboundResponse{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// readURL parses the guest's URL and its destination.
func readURL(raw string) (*url.URL, target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the whole URL, query string and all.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, target{}, fmt.Errorf("the URL cannot be read: %v", err)
	}
	t, err := parseTarget(u, raw)
	return u, t, err
}

// describe fills in the record's destination: canonical when the URL is one the policy can
// match, else what it could read of it, made safe to keep and marked Malformed.
func describe(rec *OutboundRecord, u *url.URL, t target, urlErr error, raw string) {
	if urlErr == nil {
		rec.Scheme, rec.Host, rec.Port = t.scheme, t.host, t.port
		rec.Path = auditText(u.EscapedPath(), maxAuditPathBytes)
		return
	}
	rec.Malformed = true
	if u == nil {
		authority, _ := rawAuthority(raw)
		// Credentials before an "@" stay out of the trail, as they do from a readable URL.
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			authority = authority[at+1:]
		}
		rec.Host = auditText(strings.ToLower(authority), maxAuditHostBytes)
		return
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		rec.Scheme = u.Scheme
	}
	rec.Host = auditText(strings.ToLower(u.Host), maxAuditHostBytes)
	rec.Path = auditText(u.EscapedPath(), maxAuditPathBytes)
}

var errRedirectDenied = errors.New("redirect refused")

// classifyHTTPError turns a client error into a code and a message that names no URL: the
// net/url error text repeats the whole URL, query string and all.
func classifyHTTPError(ctx context.Context, err error) (code, message string) {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	switch {
	case errors.Is(err, errPrivateAddress):
		return abi.CodeHTTPDenied, fmt.Sprintf("%v: the address is not public, and this tenant may reach only public addresses", err)
	case errors.Is(err, errRedirectDenied):
		return abi.CodeHTTPDenied, err.Error()
	case ctx.Err() != nil:
		return abi.CodeHTTPTimeout, "no complete response within the request's time limit"
	}
	return abi.CodeHTTPFailed, err.Error()
}

func validMethod(m string) bool {
	if m == "" || len(m) > maxAuditMethodBytes {
		return false
	}
	for _, r := range m {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

// newRequestID names one request in the audit trail, for its hops to share.
func newRequestID() string {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Bounds on what the audit trail keeps of a guest's method, host and path.
const (
	maxAuditMethodBytes = 20
	maxAuditHostBytes   = 255
	maxAuditPathBytes   = 1024
)

// auditText is s as the audit trail may keep it: valid UTF-8 (abi.StorableText) in which each
// control character (CR and LF among them) is U+FFFD, at most max bytes, cut on a character
// boundary and ending in "…" when cut.
func auditText(s string, max int) string {
	s = abi.StorableText(s)
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r >= 0x7f && r < 0xa0 {
			return utf8.RuneError
		}
		return r
	}, s)
	return truncateText(s, max)
}

// truncateText cuts s to at most max bytes on a character boundary, marking a cut with "…".
func truncateText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = "…"
	cut := max - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func (st *state) audit(ctx context.Context, rec OutboundRecord) {
	// The record is stored and served: what the guest wrote into it is made storable and
	// redacted (a secret in a host name or a path is the everyday way to leak one).
	rec.Method, rec.Host, rec.Path = st.storableText([]byte(rec.Method), 0), st.storableText([]byte(rec.Host), 0), st.auditPath(rec.Path)
	if a, ok := st.handler.(OutboundAuditor); ok {
		a.RecordOutbound(ctx, rec)
	}
}

func (st *state) secretGet(ctx context.Context, mem api.Memory, nameArg span) Reply {
	name := string(st.read(mem, abi.FuncSecretGet, nameArg, abi.MaxNameLen, "secret name"))
	if !st.inStep {
		return capabilityError(abi.CodeOutsideStep, "secret_get is allowed only inside a step callback: a secret read outside one would be journaled by replay-safe code")
	}
	src, ok := st.handler.(SecretSource)
	if !ok {
		return capabilityError(abi.CodeSecretNotFound, "no secrets are available to this activation")
	}
	value, found, err := src.Secret(ctx, name)
	if err != nil {
		st.stop(err)
	}
	if !found {
		return capabilityError(abi.CodeSecretNotFound, "the tenant has no secret named %q", name)
	}
	st.secrets = append(st.secrets, value)
	return Reply{Status: abi.StatusOK, Data: value}
}

// CancelWatcher is a Handler whose run may be asked to cancel itself while a step callback
// runs (ABI.md §4.15). CancelAsked is closed once a cancel the workflow has not yet been told
// of is asked; nil when none can come (none asked, or the workflow was told already, and its
// compensation's requests must go out).
type CancelWatcher interface {
	CancelAsked() <-chan struct{}
}

// cancelAsked is the handler's CancelAsked, nil when it has none.
func (st *state) cancelAsked() <-chan struct{} {
	if w, ok := st.handler.(CancelWatcher); ok {
		return w.CancelAsked()
	}
	return nil
}

// runCancelled reports whether a cancel the workflow has not yet been told of was asked.
func (st *state) runCancelled() bool {
	asked := st.cancelAsked()
	if asked == nil {
		return false
	}
	select {
	case <-asked:
		return true
	default:
		return false
	}
}
