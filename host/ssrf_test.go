package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
)

// countingListener is a test server's listener that remembers every connection it accepted,
// so a test can tell from the server's side whether the host connected at all.
type countingListener struct {
	net.Listener
	mu       sync.Mutex
	accepted []string // remote address of each accepted connection
	requests int
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.accepted = append(l.accepted, c.RemoteAddr().String())
		l.mu.Unlock()
	}
	return c, err
}

// ssrfServer is one listener of the matrix: /hello answers, /redirect?to=URL redirects there,
// /chain/N redirects N times on this server before answering.
type ssrfServer struct {
	name string
	l    *countingListener
	srv  *httptest.Server
	port int
	host string // as in a URL: 127.0.0.1 or [::1]
}

func startSSRFServer(t *testing.T, name, network, addr string) *ssrfServer {
	t.Helper()
	inner, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	s := &ssrfServer{name: name, l: &countingListener{Listener: inner}}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == probePath {
			// The test's own probe (see counts): not a request the host made.
			w.WriteHeader(http.StatusNoContent)
			return
		}
		s.l.mu.Lock()
		s.l.requests++
		s.l.mu.Unlock()
		switch {
		case r.URL.Path == "/redirect":
			w.Header().Set("Location", r.URL.Query().Get("to"))
			w.WriteHeader(http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/chain/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/chain/"))
			if n > 0 {
				http.Redirect(w, r, "/chain/"+strconv.Itoa(n-1), http.StatusFound)
				return
			}
			fmt.Fprint(w, "end of chain")
		default:
			fmt.Fprintf(w, "hello from %s", name)
		}
	})
	s.srv = httptest.NewUnstartedServer(mux)
	s.srv.Listener.Close()
	s.srv.Listener = s.l
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	ap := inner.Addr().(*net.TCPAddr)
	s.port = ap.Port
	s.host = "127.0.0.1"
	if network == "tcp6" {
		s.host = "[::1]"
	}
	return s
}

// hostport is the server's authority in a URL, with port p instead of its own when p > 0.
func (s *ssrfServer) hostport() string { return s.host + ":" + strconv.Itoa(s.port) }

// probePath is the path of counts' probe request, which the servers answer without counting.
const probePath = "/__ssrf_probe"

// counts returns the connections the listener accepted (counts' own probes left out) and the
// requests it served, once every connection made before the call has been accepted. A probe
// connection made now is accepted after all of them (the accept queue is first in, first out),
// and its request being answered proves it was accepted, so "no connection" is a fact rather
// than a race.
//
// The probe is told apart by its request, not by its address alone: a connection the host made
// and closed earlier can have had the same local port (Linux reuses an ephemeral port whose
// earlier connection the server closed first), so waiting for the probe's address to appear in
// the list could be satisfied by that old entry. Once the answer is back, the probe is the last
// entry with its address, since no other connection can hold that address while it is open.
func (s *ssrfServer) counts(t *testing.T) (conns, requests int) {
	t.Helper()
	probe, err := net.DialTimeout("tcp", s.l.Addr().String(), 30*time.Second)
	if err != nil {
		t.Fatalf("probe %s: %v", s.name, err)
	}
	defer probe.Close()
	probe.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(probe, "GET %s HTTP/1.1\r\nHost: probe\r\n\r\n", probePath); err != nil {
		t.Fatalf("probe %s: %v", s.name, err)
	}
	res, err := http.ReadResponse(bufio.NewReader(probe), nil)
	if err != nil {
		t.Fatalf("probe %s: %v", s.name, err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("probe %s: status %d", s.name, res.StatusCode)
	}
	mine := probe.LocalAddr().String()
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	for i := len(s.l.accepted) - 1; i >= 0; i-- {
		if s.l.accepted[i] == mine {
			s.l.accepted = slices.Delete(s.l.accepted, i, i+1)
			return len(s.l.accepted), s.l.requests
		}
	}
	t.Fatalf("probe %s: answered, but its connection %s is not among the accepted", s.name, mine)
	return 0, 0
}

// ssrfCase is one request spelling and what the open policy (which allows v4a on http only,
// v6a on its port, localhost on v4b's port, and nothing else) makes of it: the code it ends
// with ("" for a response) and the requests each server must have served. Every other policy
// of the matrix refuses every case with http_denied and no connection at all.
type ssrfCase struct {
	name     string
	url      string
	openCode string
	served   map[string]int // server name -> requests under the open policy
}

// TestSSRFMatrix runs every request spelling of ssrfCases under every policy, through both
// doors of outbound HTTP (the http_request verb, with the URL exactly as the guest gave it,
// and Extism's own http_request), against loopback servers on two IPv4 and two IPv6 ports,
// and checks from the servers' side that where the policy says no, no connection was made,
// and that with AllowPrivate on the allowed spellings do connect.
func TestSSRFMatrix(t *testing.T) {
	servers := map[string]*ssrfServer{
		"v4a": startSSRFServer(t, "v4a", "tcp4", "127.0.0.1:0"),
		"v4b": startSSRFServer(t, "v4b", "tcp4", "127.0.0.1:0"),
	}
	v6 := true
	if l, err := net.Listen("tcp6", "[::1]:0"); err != nil {
		// Not a pass: say so. Every IPv6 case is then skipped.
		t.Logf("no IPv6 loopback on this machine (%v): the [::1] listeners are left out", err)
		v6 = false
	} else {
		l.Close()
		servers["v6a"] = startSSRFServer(t, "v6a", "tcp6", "[::1]:0")
		servers["v6b"] = startSSRFServer(t, "v6b", "tcp6", "[::1]:0")
	}
	// localhost resolves to both 127.0.0.1 and ::1: v4b's port must not be an IPv6 server's,
	// or a request to localhost on it could reach that one instead.
	for _, name := range []string{"v6a", "v6b"} {
		if s := servers[name]; s != nil && s.port == servers["v4b"].port {
			t.Skipf("v4b and %s got the same port %d; run again", name, s.port)
		}
	}
	v4a, v4b := servers["v4a"], servers["v4b"]
	hp := func(name string) string {
		if s := servers[name]; s != nil {
			return s.hostport()
		}
		return "[::1]:1"
	}
	portOf := func(name string) string {
		if s := servers[name]; s != nil {
			return strconv.Itoa(s.port)
		}
		return "1"
	}
	a, b := portOf("v4a"), portOf("v4b")
	hello := func(name string) map[string]int { return map[string]int{name: 1} }
	none := map[string]int{}
	denied := abi.CodeHTTPDenied
	redirect := func(to string) string { return "http://" + v4a.hostport() + "/redirect?to=" + url.QueryEscape(to) }

	cases := []ssrfCase{
		// Loopback in every spelling.
		{"127.0.0.1 on the allowed port", "http://" + v4a.hostport() + "/hello", "", hello("v4a")},
		{"127.1", "http://127.1:" + a + "/hello", denied, none},
		{"hex 0x7f000001", "http://0x7f000001:" + a + "/hello", denied, none},
		{"decimal 2130706433", "http://2130706433:" + a + "/hello", denied, none},
		{"octal 0177.0.0.1", "http://0177.0.0.1:" + a + "/hello", denied, none},
		{"127.000.000.001", "http://127.000.000.001:" + a + "/hello", denied, none},
		{"[::1] on the allowed port", "http://" + hp("v6a") + "/hello", "", hello("v6a")},
		{"[0:0:0:0:0:0:0:1]", "http://[0:0:0:0:0:0:0:1]:" + portOf("v6a") + "/hello", denied, none},
		{"[::ffff:127.0.0.1]", "http://[::ffff:127.0.0.1]:" + a + "/hello", denied, none},
		{"[::ffff:7f00:1]", "http://[::ffff:7f00:1]:" + a + "/hello", denied, none},
		{"localhost", "http://localhost:" + b + "/hello", "", hello("v4b")},
		// Uppercase is lowercased (names are case-insensitive); a trailing dot is refused.
		{"LOCALHOST", "http://LOCALHOST:" + b + "/hello", "", hello("v4b")},
		{"localhost.", "http://localhost.:" + b + "/hello", denied, none},
		{"127.0.0.1.", "http://127.0.0.1.:" + a + "/hello", denied, none},
		// Ports and schemes: the allowlist names them.
		{"127.0.0.1 on another port", "http://" + v4b.hostport() + "/hello", denied, none},
		{"localhost on another port", "http://localhost:" + a + "/hello", denied, none},
		{"[::1] on another port", "http://" + hp("v6b") + "/hello", denied, none},
		{"https where the entry says http", "https://" + v4a.hostport() + "/hello", denied, none},
		{"a port with a leading zero", "http://127.0.0.1:0" + a + "/hello", denied, none},
		{"two ports", "http://" + v4a.hostport() + ":" + b + "/hello", denied, none},
		// Zone ids.
		{"[::1%25lo]", "http://[::1%25lo]:" + portOf("v6a") + "/hello", denied, none},
		{"zone id ending in an allowed suffix", "http://[::1%25x.allowed.example]:" + portOf("v6a") + "/hello", denied, none},
		{"link-local [fe80::1%25eth0]", "http://[fe80::1%25eth0]/", denied, none},
		// Link-local, private and shared ranges.
		{"metadata 169.254.169.254", "http://169.254.169.254/latest/meta-data/", denied, none},
		{"10.0.0.1", "http://10.0.0.1/", denied, none},
		{"172.16.0.1", "http://172.16.0.1/", denied, none},
		{"192.168.1.1", "http://192.168.1.1/", denied, none},
		{"100.64.0.1", "http://100.64.0.1/", denied, none},
		{"0.0.0.0", "http://0.0.0.0:" + a + "/hello", denied, none},
		{"[::]", "http://[::]:" + portOf("v6a") + "/hello", denied, none},
		// Userinfo and other authority tricks.
		{"userinfo", "http://user:pw@" + v4a.hostport() + "/hello", denied, none},
		{"userinfo naming the allowed host", "http://" + v4a.hostport() + "@evil.example/hello", denied, none},
		{"a fragment before @", "http://evil.example#@" + v4a.hostport() + "/hello", denied, none},
		{"a backslash", "http://" + v4a.hostport() + "\\@evil.example/hello", denied, none},
		{"percent-encoded dots", "http://127%2e0%2e0%2e1:" + a + "/hello", denied, none},
		{"percent-encoded name", "http://loc%61lhost:" + b + "/hello", denied, none},
		{"non-ASCII name", "http://lоcalhost:" + b + "/hello", denied, none}, // a Cyrillic о
		// Scheme tricks.
		{"file", "file:///etc/passwd", denied, none},
		{"ftp", "ftp://" + v4a.hostport() + "/", denied, none},
		{"gopher", "gopher://" + v4a.hostport() + "/_GET%20/hello", denied, none},
		{"scheme-relative", "//" + v4a.hostport() + "/hello", denied, none},
		{"one slash", "http:/" + v4a.hostport() + "/hello", denied, none},
		{"no slash", "http:" + v4a.hostport() + "/hello", denied, none},
		{"uppercase scheme", "HTTP://" + v4a.hostport() + "/hello", "", hello("v4a")},
		// Redirects: the first hop is allowed, each later one is checked as the first was.
		{"redirect to another port", redirect("http://" + v4b.hostport() + "/hello"), denied, hello("v4a")},
		{"redirect to [::1] on another port", redirect("http://" + hp("v6b") + "/hello"), denied, hello("v4a")},
		{"redirect to https", redirect("https://" + v4a.hostport() + "/hello"), denied, hello("v4a")},
		{"redirect to ftp", redirect("ftp://" + v4a.hostport() + "/"), denied, hello("v4a")},
		{"redirect to file", redirect("file:///etc/passwd"), denied, hello("v4a")},
		{"redirect to 127.1", redirect("http://127.1:" + a + "/hello"), denied, hello("v4a")},
		{"redirect to metadata", redirect("http://169.254.169.254/latest/meta-data/"), denied, hello("v4a")},
		{"redirect to a zone id", redirect("http://[::1%25x.allowed.example]:" + portOf("v6a") + "/hello"), denied, hello("v4a")},
		{"redirect to a Location that is not a URL", redirect("http://[::1%x]/hello"), abi.CodeHTTPFailed, hello("v4a")},
		{"redirect with userinfo", redirect("http://u:p@" + v4b.hostport() + "/hello"), denied, hello("v4a")},
		{"redirect to a percent-encoded name", redirect("http://loc%61lhost:" + b + "/hello"), abi.CodeHTTPFailed, hello("v4a")},
		{"redirect to an allowed name", redirect("http://localhost:" + b + "/hello"), "", map[string]int{"v4a": 1, "v4b": 1}},
		{"redirect to an allowed [::1]", redirect("http://" + hp("v6a") + "/hello"), "", map[string]int{"v4a": 1, "v6a": 1}},
		{"a chain of 3 redirects", "http://" + v4a.hostport() + "/chain/3", "", map[string]int{"v4a": 4}},
		{"a chain of 6 redirects, one too many", "http://" + v4a.hostport() + "/chain/6", denied, map[string]int{"v4a": 6}},
	}
	if name, err := os.Hostname(); err == nil {
		// A name of this machine's own that resolves to loopback (Debian maps it in
		// /etc/hosts), besides localhost.
		if addrs, err := net.LookupHost(name); err == nil && len(addrs) > 0 && allLoopback(addrs) {
			want, code := none, denied
			if slices.Contains(addrs, "127.0.0.1") && !slices.Contains(addrs, "::1") {
				want, code = hello("v4b"), ""
			}
			cases = append(cases, ssrfCase{"this machine's name " + name, "http://" + name + ":" + b + "/hello", code, want})
			defer t.Logf("the machine's name %s resolves to %v", name, addrs)
		}
	}

	allowed := []string{"http://" + v4a.hostport(), "[::1]:" + portOf("v6a"), "localhost:" + b, "*.allowed.example"}
	if name, err := os.Hostname(); err == nil && checkEntry(name) {
		allowed = append(allowed, name+":"+b)
	}
	policies := []struct {
		name string
		pol  *host.Outbound
	}{
		{"no policy", nil},
		{"empty allowlist", &host.Outbound{AllowPrivate: true}},
		// The open allowlist and the private ranges, without AllowPrivate: the address check
		// stands behind every allowed name.
		{"private addresses refused", &host.Outbound{AllowHosts: append(slices.Clone(allowed),
			"169.254.169.254", "10.0.0.1", "192.168.1.1", "172.16.0.1", "100.64.0.1", "0.0.0.0", "[::]")}},
		// Entries without a port allow 80 and 443 only; none of the servers is on either.
		{"entries without ports", &host.Outbound{AllowHosts: []string{"127.0.0.1", "localhost", "[::1]", "*.allowed.example"}, AllowPrivate: true}},
		{"wildcards only", &host.Outbound{AllowHosts: []string{"*.allowed.example", "*.localhost", "*.0.0.1"}, AllowPrivate: true}},
		{"open", &host.Outbound{AllowHosts: allowed, AllowPrivate: true}},
	}
	doors := []struct {
		name, fixture, workflow string
		input                   func(url string) map[string]any
	}{
		{"http_request verb", "capabilities.wasm", "http-fetch", func(u string) map[string]any { return map[string]any{"url": u, "raw": true} }},
		{"Extism http_request", "extism_go.wasm", "extism-http", func(u string) map[string]any { return map[string]any{"url": u} }},
	}

	total, responses, reached, refusedLater := 0, 0, 0, 0
	for _, door := range doors {
		m := load(t, door.fixture)
		for _, p := range policies {
			for _, c := range cases {
				if !v6 && (strings.Contains(c.url, "[::1]") || c.served["v6a"] > 0) {
					continue
				}
				total++
				name := door.name + "/" + p.name + "/" + c.name
				wantCode, served := denied, none
				if p.name == "open" {
					wantCode, served = c.openCode, c.served
				}
				before := map[string][2]int{}
				for n, s := range servers {
					conns, reqs := s.counts(t)
					before[n] = [2]int{conns, reqs}
				}
				h := &capHandler{memHandler: newMemHandler()}
				pol := p.pol
				if pol != nil {
					cp := *pol
					cp.Timeout = 10 * time.Second
					pol = &cp
				}
				in, _ := json.Marshal(door.input(c.url))
				res, err := runtime(t).Activate(context.Background(), m, host.Activation{Workflow: door.workflow, Input: in,
					RunID: "r", Handler: h, Outbound: pol, Logger: slog.New(slog.DiscardHandler)})
				code := ""
				var ge *host.GuestError
				switch {
				case errors.As(err, &ge):
					code = ge.Info.Code
				case err != nil:
					t.Errorf("%s: activation: %v", name, err)
					continue
				case res.Error != nil:
					code = res.Error.Code
				}
				if code != wantCode {
					msg := ""
					if ge != nil {
						msg = ge.Info.Message
					} else if res.Error != nil {
						msg = res.Error.Message
					}
					t.Errorf("%s: %s ended with %q (%s), want %q", name, c.url, code, msg, wantCode)
				}
				if wantCode == "" {
					responses++
				}
				if len(served) > 0 {
					reached++
					if wantCode != "" {
						refusedLater++
					}
				}
				for n, s := range servers {
					conns, reqs := s.counts(t)
					newConns, newReqs := conns-before[n][0], reqs-before[n][1]
					if newReqs != served[n] {
						t.Errorf("%s: %s served %d requests, want %d", name, n, newReqs, served[n])
					}
					if served[n] == 0 && newConns != 0 {
						t.Errorf("%s: %s accepted %d connections where the policy says no", name, n, newConns)
					}
				}
				if len(h.audit) == 0 || wantCode != "" && h.audit[len(h.audit)-1].Error != wantCode {
					t.Errorf("%s: audit trail %+v, want every attempt recorded, the last with %q", name, h.audit, wantCode)
				}
			}
		}
	}
	t.Logf("SSRF matrix: %d requests (%d spellings x %d policies x %d doors): %d answered, %d reached a server (all under the open policy; %d of them refused at a later hop), the other %d made no connection at all",
		total, len(cases), len(policies), len(doors), responses, reached, refusedLater, total-reached)
}

func allLoopback(addrs []string) bool {
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip == nil || !ip.IsLoopback() {
			return false
		}
	}
	return true
}

// checkEntry reports whether name is an allowlist entry the host accepts (a machine name may
// not be one: it may have capitals or underscores).
func checkEntry(name string) bool { return host.CheckAllowedHosts([]string{name + ":1"}) == nil }
