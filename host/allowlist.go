package host

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// The outbound allowlist and the one spelling of a host it is matched on (ABI.md §4.11).
//
// A request's host is canonical or refused: lowercased, and otherwise exactly as the allowlist
// and the DNS would write it. A trailing dot, an IPv6 zone, a percent-encoded or non-ASCII
// name, an IPv4 address in any form but dotted decimal (127.1, 0x7f000001, 2130706433, which
// resolvers accept and the allowlist would not recognise) and an IPv6 address in any form but
// RFC 5952's are refused rather than normalised into a match: a spelling the policy does not
// recognise is never one it allows.

// Limits on the allowlist itself: each entry may become a metric label, so their number is
// bounded too.
const (
	MaxAllowedHosts     = 256
	maxHostPatternBytes = 300
	maxHostNameBytes    = 253 // RFC 1035's bound on a name, without the trailing dot
	maxLabelBytes       = 63
)

// ErrNonCanonicalHost is wrapped by every refusal of a request's host for its spelling.
var ErrNonCanonicalHost = errors.New("host is not in canonical form")

// hostPattern is one allowlist entry: a name, a "*." wildcard over a name's subdomains, or an
// IP literal, with an optional scheme and port.
type hostPattern struct {
	entry    string     // as written: the metric label of the requests it lets through
	scheme   string     // "http", "https", or "" for both
	port     int        // 0: the scheme's default port (80 for http, 443 for https)
	wildcard bool       // name is a suffix: "*.example.com" matches a.example.com, not example.com
	name     string     // lowercase name (or wildcard suffix); "" for an IP literal
	addr     netip.Addr // the IP literal; the zero Addr for a name
}

// parseHostPattern reads one allowlist entry: [scheme "://"] host [":" port], where host is a
// name, "*." and a name, a dotted-decimal IPv4 address or a bracketed IPv6 address, each in
// the canonical form requests are matched in.
func parseHostPattern(entry string) (hostPattern, error) {
	p := hostPattern{entry: entry}
	if entry == "" || len(entry) > maxHostPatternBytes {
		return p, fmt.Errorf("an entry is 1 to %d bytes", maxHostPatternBytes)
	}
	rest := entry
	if scheme, after, ok := strings.Cut(rest, "://"); ok {
		if scheme != "http" && scheme != "https" {
			return p, fmt.Errorf("the scheme must be http or https, in lowercase")
		}
		p.scheme, rest = scheme, after
	}
	if strings.ContainsAny(rest, "/?#@%\\") {
		return p, fmt.Errorf("an entry names a host, with an optional scheme and port: no path, query, user or escapes")
	}
	host, port, err := splitHostPort(rest)
	if err != nil {
		return p, err
	}
	if port != "" {
		if p.port, err = parsePort(port); err != nil {
			return p, err
		}
	}
	if suffix, ok := strings.CutPrefix(host, "*."); ok {
		if err := checkHostName(suffix); err != nil {
			return p, fmt.Errorf("after \"*.\": %w", err)
		}
		p.wildcard, p.name = true, suffix
		return p, nil
	}
	if strings.Contains(host, "*") {
		return p, fmt.Errorf("a wildcard is only \"*.\" in front of a name")
	}
	if host != strings.ToLower(host) {
		return p, fmt.Errorf("write the host in lowercase")
	}
	addr, isIP, err := canonicalHost(host)
	if err != nil {
		return p, err
	}
	if isIP {
		p.addr = addr
	} else {
		p.name = host
	}
	return p, nil
}

// splitHostPort splits "host", "host:port", "[v6]" or "[v6]:port"; the brackets stay on host.
func splitHostPort(s string) (host, port string, err error) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", fmt.Errorf("%w: an unclosed [", ErrNonCanonicalHost)
		}
		host, rest := s[:end+1], s[end+1:]
		if rest == "" {
			return host, "", nil
		}
		if rest[0] != ':' {
			return "", "", fmt.Errorf("%w: text after ]", ErrNonCanonicalHost)
		}
		if rest == ":" {
			return "", "", fmt.Errorf("an empty port")
		}
		return host, rest[1:], nil
	}
	if strings.Count(s, ":") > 1 {
		return "", "", fmt.Errorf("%w: an IPv6 address goes in brackets", ErrNonCanonicalHost)
	}
	host, port, hasPort := strings.Cut(s, ":")
	if hasPort && port == "" {
		return "", "", fmt.Errorf("an empty port")
	}
	return host, port, nil
}

// parsePort reads a port in decimal, 1 to 65535, without leading zeros.
func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535 written without leading zeros", s)
	}
	return n, nil
}

// canonicalHost checks that host (lowercase, IPv6 in brackets) is in canonical form, and says
// whether it is an IP literal.
func canonicalHost(host string) (addr netip.Addr, isIP bool, err error) {
	if inner, ok := strings.CutPrefix(host, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if !ok {
			return netip.Addr{}, false, fmt.Errorf("%w: an unclosed [", ErrNonCanonicalHost)
		}
		a, perr := netip.ParseAddr(inner)
		switch {
		case perr != nil || !a.Is6():
			return netip.Addr{}, false, fmt.Errorf("%w: %q is not an IPv6 address", ErrNonCanonicalHost, inner)
		case a.Zone() != "" || strings.Contains(inner, "%"):
			return netip.Addr{}, false, fmt.Errorf("%w: an IPv6 zone", ErrNonCanonicalHost)
		case a.Is4In6():
			return netip.Addr{}, false, fmt.Errorf("%w: an IPv4-mapped IPv6 address; write the IPv4 address", ErrNonCanonicalHost)
		case a.String() != inner:
			return netip.Addr{}, false, fmt.Errorf("%w: write the IPv6 address as %s", ErrNonCanonicalHost, a)
		}
		return a, true, nil
	}
	if a, perr := netip.ParseAddr(host); perr == nil {
		// ParseAddr takes only dotted decimal without leading zeros for IPv4; an IPv6 address
		// outside brackets cannot reach here from a URL, and is refused in an entry.
		if !a.Is4() {
			return netip.Addr{}, false, fmt.Errorf("%w: an IPv6 address goes in brackets", ErrNonCanonicalHost)
		}
		return a, true, nil
	}
	return netip.Addr{}, false, checkHostName(host)
}

// checkHostName accepts a lowercase DNS name of letters, digits and hyphens: labels of 1 to 63
// bytes that neither start nor end with a hyphen, at most 253 bytes in all, no trailing dot,
// and a last label that is not a number (a resolver reads "127.1" or "0x7f000001" as an IPv4
// address).
func checkHostName(name string) error {
	if name == "" || len(name) > maxHostNameBytes {
		return fmt.Errorf("%w: a host name is 1 to %d bytes", ErrNonCanonicalHost, maxHostNameBytes)
	}
	if strings.HasSuffix(name, ".") {
		return fmt.Errorf("%w: a trailing dot", ErrNonCanonicalHost)
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > maxLabelBytes {
			return fmt.Errorf("%w: a label is 1 to %d bytes", ErrNonCanonicalHost, maxLabelBytes)
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("%w: a label starts or ends with '-'", ErrNonCanonicalHost)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("%w: %q is not a lowercase letter, digit or '-' (write an international name in its xn-- form)", ErrNonCanonicalHost, c)
			}
		}
	}
	if numeric(labels[len(labels)-1]) {
		return fmt.Errorf("%w: a name ending in a number is an IPv4 address in a non-standard form; write it as a.b.c.d", ErrNonCanonicalHost)
	}
	return nil
}

// numeric reports a label a resolver's inet_aton would read as a number: decimal (octal with a
// leading 0) or 0x hexadecimal.
func numeric(label string) bool {
	digits := label
	if hex, ok := strings.CutPrefix(label, "0x"); ok {
		if hex == "" {
			return true
		}
		for i := 0; i < len(hex); i++ {
			if c := hex[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(digits); i++ {
		if c := digits[i]; c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// CheckAllowedHosts reports the first malformed entry of an allowlist, naming it, or too many
// entries. Set on a tenant, a malformed entry would match nothing; this tells the admin so.
func CheckAllowedHosts(entries []string) error {
	if len(entries) > MaxAllowedHosts {
		return fmt.Errorf("allowedHosts has %d entries, the limit is %d", len(entries), MaxAllowedHosts)
	}
	for _, e := range entries {
		if err := CheckAllowedHost(e); err != nil {
			return fmt.Errorf("allowedHosts entry %q: %v", truncateText(e, 80), err)
		}
	}
	return nil
}

// CheckAllowedHost reports why one allowlist entry is malformed, or nil.
func CheckAllowedHost(entry string) error {
	_, err := parseHostPattern(entry)
	return err
}

// target is where a request goes, in canonical form: what the allowlist is matched on, what is
// dialled and what the audit trail records.
type target struct {
	scheme string
	host   string     // lowercase; an IPv6 literal in brackets
	addr   netip.Addr // valid when host is an IP literal
	port   int        // explicit, or the scheme's default
	// explicitPort is whether the URL named the port (kept so the URL sent is the URL asked).
	explicitPort bool
}

func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

// hostport is the target's authority as sent.
func (t target) hostport() string {
	if t.explicitPort {
		return t.host + ":" + strconv.Itoa(t.port)
	}
	return t.host
}

// parseTarget reads the destination of an absolute http or https URL. raw is the URL as the
// guest wrote it (or a redirect's Location) when there is one: url.Parse decodes a
// percent-encoded host, which must be refused, not decoded into a match.
func parseTarget(u *url.URL, raw string) (target, error) {
	if u.Scheme != "http" && u.Scheme != "https" || u.Opaque != "" || u.Host == "" {
		return target{}, errors.New("the URL must be an absolute http or https URL")
	}
	if u.User != nil {
		return target{}, errUserinfo
	}
	if authority, ok := rawAuthority(raw); ok && strings.ContainsAny(authority, "%\\") {
		return target{}, fmt.Errorf("%w: a percent-encoded host or an IPv6 zone", ErrNonCanonicalHost)
	}
	hostText, portText, err := splitHostPort(u.Host)
	if err != nil {
		return target{}, err
	}
	t := target{scheme: u.Scheme, host: strings.ToLower(hostText), port: defaultPort(u.Scheme)}
	if portText != "" {
		if t.port, err = parsePort(portText); err != nil {
			return target{}, err
		}
		t.explicitPort = true
	}
	addr, isIP, err := canonicalHost(t.host)
	if err != nil {
		return target{}, err
	}
	if isIP {
		t.addr = addr
	}
	return t, nil
}

var errUserinfo = errors.New("credentials in the URL are not allowed; send them in a header")

// rawAuthority is the authority of an absolute or scheme-relative URL as written, before any
// decoding; ok=false when raw has none (a relative redirect keeps the host already checked).
func rawAuthority(raw string) (string, bool) {
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 && !strings.ContainsAny(rest[:i], "/?#") {
		rest = rest[i+1:]
	}
	after, ok := strings.CutPrefix(rest, "//")
	if !ok {
		return "", false
	}
	if end := strings.IndexAny(after, "/?#"); end >= 0 {
		after = after[:end]
	}
	return after, true
}

// match returns the first allowlist entry that lets t through.
func match(patterns []hostPattern, t target) (hostPattern, bool) {
	for _, p := range patterns {
		if p.scheme != "" && p.scheme != t.scheme {
			continue
		}
		if want := p.port; want == 0 && t.port != defaultPort(t.scheme) || want != 0 && t.port != want {
			continue
		}
		switch {
		case p.addr.IsValid():
			if t.addr == p.addr {
				return p, true
			}
		case t.addr.IsValid():
			// A name or a wildcard never matches an IP literal.
		case p.wildcard:
			if strings.HasSuffix(t.host, "."+p.name) {
				return p, true
			}
		case t.host == p.name:
			return p, true
		}
	}
	return hostPattern{}, false
}

// compileAllowlist parses the entries; a malformed one (set before entries were checked)
// matches nothing.
func compileAllowlist(entries []string) []hostPattern {
	out := make([]hostPattern, 0, len(entries))
	for _, e := range entries {
		if p, err := parseHostPattern(e); err == nil {
			out = append(out, p)
		}
	}
	return out
}
