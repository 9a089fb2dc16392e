package host

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestAllowlistEntries: CheckAllowedHosts accepts the entry forms of ABI.md §4.11 and refuses
// every other, naming the entry.
func TestAllowlistEntries(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{
		"api.example.com", "*.example.com", "https://api.example.com", "http://api.example.com:8080",
		"api.example.com:8443", "192.0.2.7", "192.0.2.7:8080", "[2001:db8::7]", "https://[2001:db8::7]:8443",
		"xn--bcher-kva.example", "localhost", "a-b.example", "*.a.example:444",
	} {
		if err := CheckAllowedHosts([]string{ok}); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"", "API.example.com", "api.example.com.", "*.example.com.", "*", "*.", "a.*.example.com", "*example.com",
		"ftp://api.example.com", "HTTPS://api.example.com", "https://", "api.example.com/", "api.example.com/path",
		"user@api.example.com", "api.example.com:", "api.example.com:0", "api.example.com:65536", "api.example.com:080",
		"api.example.com:x", "::1", "[::1%25lo]", "[::1%lo]", "[::ffff:127.0.0.1]", "[0:0::1]", "[192.0.2.7]",
		"127.1", "0x7f000001", "2130706433", "0177.0.0.1", "127.000.000.001", "*.0.0.1", "ex%61mple.com",
		"bücher.example", "-a.example", "a-.example", "a..example", "under_score.example", " api.example.com",
		"api.example.com?x", "api.example.com#x", strings.Repeat("a", 64) + ".example",
		strings.Repeat("a.", 127) + "example",
	} {
		err := CheckAllowedHosts([]string{"fine.example", bad})
		if err == nil {
			t.Errorf("%q accepted", bad)
			continue
		}
		if !strings.Contains(err.Error(), truncateText(bad, 80)) {
			t.Errorf("%q: the error does not name the entry: %v", bad, err)
		}
	}
	if err := CheckAllowedHosts(make([]string, MaxAllowedHosts+1)); err == nil || !strings.Contains(err.Error(), "257 entries") {
		t.Errorf("too many entries: %v", err)
	}
}

// TestAllowlistMatching: an entry without a port allows https on 443 and http on 80; a scheme
// or port in the entry narrows it; a wildcard matches subdomains, never the name itself or an
// IP literal; an IP entry matches only that address; and the host is matched lowercased but
// otherwise only in canonical form.
func TestAllowlistMatching(t *testing.T) {
	t.Parallel()
	patterns := compileAllowlist([]string{
		"api.example.com", "https://pay.example.com", "http://old.example.com:8080", "svc.example.com:8443",
		"*.wild.example", "192.0.2.7", "[2001:db8::7]:9000",
		"NOT-CANONICAL.example", // set before entries were checked: matches nothing
	})
	for _, c := range []struct {
		url, rule string // rule "" when refused
	}{
		{"https://api.example.com/x", "api.example.com"},
		{"http://api.example.com/x", "api.example.com"},
		{"https://api.example.com:443/x", "api.example.com"},
		{"http://api.example.com:80/x", "api.example.com"},
		{"https://API.Example.COM/x", "api.example.com"},
		{"https://api.example.com:80/x", ""},
		{"http://api.example.com:443/x", ""},
		{"https://api.example.com:8443/x", ""},
		{"https://pay.example.com/x", "https://pay.example.com"},
		{"http://pay.example.com/x", ""},
		{"http://old.example.com:8080/", "http://old.example.com:8080"},
		{"https://old.example.com:8080/", ""},
		{"http://old.example.com/", ""},
		{"https://svc.example.com:8443/", "svc.example.com:8443"},
		{"http://svc.example.com:8443/", "svc.example.com:8443"},
		{"https://svc.example.com/", ""},
		{"https://a.wild.example/", "*.wild.example"},
		{"https://a.b.wild.example/", "*.wild.example"},
		{"https://wild.example/", ""},
		{"https://awild.example/", ""},
		{"https://192.0.2.7/", "192.0.2.7"},
		{"https://192.0.2.8/", ""},
		{"http://[2001:db8::7]:9000/", "[2001:db8::7]:9000"},
		{"http://[2001:db8::7]/", ""},
		{"https://not-canonical.example/", ""},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		tg, err := parseTarget(u, c.url)
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		p, ok := match(patterns, tg)
		if ok != (c.rule != "") || p.entry != c.rule {
			t.Errorf("%s matched %q (%v), want %q", c.url, p.entry, ok, c.rule)
		}
	}
}

// TestRequestHostsMustBeCanonical: a spelling of a host the allowlist could not recognise is
// refused before any matching, never normalised into a match.
func TestRequestHostsMustBeCanonical(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"http://api.example.com./", "http://[::1%25lo]/", "http://[fe80::1%25eth0]/", "http://[::1%25x.wild.example]/",
		"http://127.1/", "http://0x7f000001/", "http://2130706433/", "http://0177.0.0.1/", "http://[::ffff:127.0.0.1]/",
		"http://[0:0:0:0:0:0:0:1]/", "http://[::FFFF:7f00:1]/", "http://bücher.example/", "http://a_b.example/",
		"http://api.example.com:0443/", "http://api.example.com:/", "http://user@api.example.com/",
		"http://" + strings.Repeat("a", 64) + ".example/", "ftp://api.example.com/", "http:api.example.com",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			continue // unreadable is refused too (readURL)
		}
		if tg, err := parseTarget(u, raw); err == nil {
			t.Errorf("%s accepted as %+v", raw, tg)
		}
	}
	// url.Parse decodes a percent-encoded host; the raw URL still shows it.
	u := &url.URL{Scheme: "http", Host: "example.com", Path: "/"}
	if _, err := parseTarget(u, "http://ex%C3%A4mple.com/"); !errors.Is(err, ErrNonCanonicalHost) {
		t.Errorf("a percent-encoded host: %v", err)
	}
}

// TestAuditText: what the audit trail keeps of a guest's text is valid UTF-8 without control
// characters, within its bound.
func TestAuditText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"GET", 20, "GET"},
		{"GET\r\nX-Injected: 1", 40, "GET\uFFFD\uFFFDX-Injected: 1"},
		{"a\x00b\x7fc\u0085d", 20, "a\uFFFDb\uFFFDc\uFFFDd"},
		{"bad\xffutf8", 20, "bad\uFFFDutf8"},
		{strings.Repeat("x", 30), 20, strings.Repeat("x", 17) + "…"},
		{"ééééééééééé", 10, "ééé…"},
	} {
		got := auditText(c.in, c.max)
		if got != c.want || len(got) > c.max || !utf8.ValidString(got) {
			t.Errorf("auditText(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}
