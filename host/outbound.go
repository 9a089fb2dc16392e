package host

import (
	"bytes"
	"context"
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

	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
)

// Outbound is an activation's policy for outbound HTTP. A nil policy refuses every request.
type Outbound struct {
	// AllowHosts are the host names requests may go to: "api.stripe.com" exactly, or
	// "*.stripe.com" for any subdomain of stripe.com (not stripe.com itself). Deny by default.
	AllowHosts []string
	// AllowPrivate lets requests reach loopback, private, link-local and other non-public
	// addresses. Off, a name that resolves to one is refused, whatever the allowlist says, so
	// a tenant cannot reach the operator's own network.
	AllowPrivate bool
	// MaxRequestBytes bounds a request body; default 1 MiB.
	MaxRequestBytes int
	// MaxResponseBytes bounds a response body; default 4 MiB.
	MaxResponseBytes int
	// Timeout bounds one request; default 30 s. A request never outlives the activation.
	Timeout time.Duration
	// MaxRedirects bounds the redirects followed, each checked against the allowlist;
	// default 5.
	MaxRedirects int
}

// OutboundRecord is one outbound request as the audit trail keeps it: no bodies, no header
// values, no query string (any of them may carry a secret).
type OutboundRecord struct {
	Step     string
	Method   string
	Host     string
	Path     string
	Status   int    // 0 when no response came
	Error    string // an abi.Code* when the request was refused or failed
	BytesOut int
	BytesIn  int
	Duration time.Duration
	At       time.Time
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

// Allowed reports whether host (no port) matches one of the patterns.
func (o *Outbound) Allowed(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, p := range o.AllowHosts {
		p = strings.ToLower(strings.TrimSpace(p))
		if suffix, ok := strings.CutPrefix(p, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
			continue
		}
		if host == p {
			return true
		}
	}
	return false
}

func (o *Outbound) withDefaults() Outbound {
	c := *o
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = 1 << 20
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = 4 << 20
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.MaxRedirects <= 0 {
		c.MaxRedirects = 5
	}
	return c
}

// errPrivateAddress is what the dialer says about an address the policy keeps out.
var errPrivateAddress = errors.New("private address")

// publicOnly refuses connections to addresses that are not public unicast. It runs after DNS
// resolution, on the address actually dialled, so a public name that resolves to 127.0.0.1
// (DNS rebinding) is caught too.
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
// dials any. Proxies from the environment are ignored: they would bypass the address check.
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
	if !st.inStep {
		return capabilityError(abi.CodeOutsideStep, "http_request is allowed only inside a step callback: a request outside one would run again on every replay")
	}
	if st.outbound == nil {
		return capabilityError(abi.CodeHTTPDenied, "outbound HTTP is not enabled for this tenant")
	}
	pol := st.outbound.withDefaults()
	// Base64 makes a body 4/3 larger; headers and the URL get 64 KiB.
	raw := st.read(mem, abi.FuncHTTPRequest, reqArg, pol.MaxRequestBytes/3*4+4+64<<10, "request")
	var req abi.HTTPRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		st.violation("%s: request is not valid JSON: %v", abi.FuncHTTPRequest, err)
	}
	return st.doHTTP(ctx, pol, req)
}

// doHTTP makes the request under the policy and replies with the response or why not.
func (st *state) doHTTP(ctx context.Context, pol Outbound, req abi.HTTPRequest) Reply {
	resp, refused := st.sendHTTP(ctx, pol, req, len(req.Body))
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

// sendHTTP makes the request under the policy and returns the response, or an ErrorInfo whose
// code says why there is none. Every attempt, refused or not, goes to the audit trail. bodyLen
// is the size of the body the guest gave: one over the limit is refused without reading
// req.Body, which the caller may then leave empty. Both transports of outbound HTTP (the
// http_request verb and Extism's own, extism_http.go) come through here.
func (st *state) sendHTTP(ctx context.Context, pol Outbound, req abi.HTTPRequest, bodyLen int) (outboundResponse, *abi.ErrorInfo) {
	began := time.Now()
	rec := OutboundRecord{Method: strings.ToUpper(req.Method), At: began.UTC()}
	if st.handler != nil {
		rec.Step = st.handler.CurrentStep()
	}
	if rec.Method == "" {
		rec.Method = http.MethodGet
	}
	refuse := func(code, format string, args ...any) (outboundResponse, *abi.ErrorInfo) {
		rec.Error, rec.Duration = code, time.Since(began)
		st.audit(ctx, rec)
		return outboundResponse{}, &abi.ErrorInfo{Code: code, Message: fmt.Sprintf(format, args...)}
	}
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return refuse(abi.CodeHTTPDenied, "the URL must be an absolute http or https URL")
	}
	rec.Host, rec.Path = u.Hostname(), u.EscapedPath()
	if u.User != nil {
		return refuse(abi.CodeHTTPDenied, "credentials in the URL are not allowed; send them in a header")
	}
	if !validMethod(rec.Method) {
		return refuse(abi.CodeHTTPDenied, "method %q is not a valid HTTP method", req.Method)
	}
	if !pol.Allowed(u.Hostname()) {
		return refuse(abi.CodeHTTPDenied, "host %s is not in the tenant's outbound allowlist", u.Hostname())
	}
	if bodyLen > pol.MaxRequestBytes {
		return refuse(abi.CodeHTTPTooLarge, "the request body is %d bytes, the limit is %d", bodyLen, pol.MaxRequestBytes)
	}
	timeout := pol.Timeout
	if req.TimeoutMs > 0 {
		timeout = min(timeout, time.Duration(req.TimeoutMs)*time.Millisecond)
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
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
	redirects := 0
	client := &http.Client{
		Transport: transports[pol.AllowPrivate],
		CheckRedirect: func(next *http.Request, _ []*http.Request) error {
			if redirects++; redirects > pol.MaxRedirects {
				return fmt.Errorf("%w: more than %d redirects", errRedirectDenied, pol.MaxRedirects)
			}
			if !pol.Allowed(next.URL.Hostname()) {
				return fmt.Errorf("%w: a redirect to %s, which is not in the allowlist", errRedirectDenied, next.URL.Hostname())
			}
			return nil
		},
	}
	resp, err := client.Do(hreq)
	if err != nil {
		code, msg := classifyHTTPError(rctx, err)
		return refuse(code, "%s", msg)
	}
	defer resp.Body.Close()
	rec.Status = resp.StatusCode
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(pol.MaxResponseBytes)+1))
	if err != nil {
		code, msg := classifyHTTPError(rctx, err)
		return refuse(code, "%s", msg)
	}
	rec.BytesIn = len(body)
	if len(body) > pol.MaxResponseBytes {
		return refuse(abi.CodeHTTPTooLarge, "the response body is over the limit of %d bytes", pol.MaxResponseBytes)
	}
	rec.Duration = time.Since(began)
	st.audit(ctx, rec)
	return outboundResponse{status: resp.StatusCode, header: resp.Header, body: body}, nil
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
	if m == "" || len(m) > 20 {
		return false
	}
	for _, r := range m {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
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
