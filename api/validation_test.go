package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// badStrings are the kinds of string no store can keep or no JSON text should carry, each as
// the JSON text of one string.
var badStrings = []struct{ class, json string }{
	{"escaped NUL", `"a\u0000b"`},
	{"lone high surrogate", `"a\ud800b"`},
	{"lone low surrogate", `"\udc00"`},
	{"high surrogate before a letter", `"\ud800\u0041"`},
	{"invalid UTF-8", "\"a\xffb\""},
	{"UTF-8-encoded surrogate", "\"\xed\xa0\x80\""},
	{"raw NUL", "\"a\x00b\""},
	{"raw control character", "\"a\x01b\""},
}

// badNumbers are numbers no integer field of the API takes.
var badNumbers = []string{"-1", "2147483648", "9223372036854775808", "1e400", "1e1001", "1.5", `"7"`, "true", "{}"}

// mistake is one bad request and what the answer must be: the status, and a message that
// names the field at fault.
type mistake struct {
	name    string
	method  string
	path    string
	body    string
	admin   bool              // send the admin token instead of the tenant's
	header  map[string]string // extra headers; "Content-Type" replaces the default
	status  int
	naming  string // the message must contain this
	noCType bool   // send no Content-Type at all
}

// clientMistakes lists every field of every endpoint with each class of bad value. runPath is
// a live run of the tenant, which signals need to reach their payload check.
func clientMistakes(runPath string) []mistake {
	var ms []mistake
	add := func(m mistake) {
		if m.status == 0 {
			m.status = http.StatusBadRequest
		}
		ms = append(ms, m)
	}
	long := strings.Repeat("x", 201)

	// Every string field of every JSON body, with every bad string, raw and escaped.
	type stringField struct {
		method, path, template, naming string
		admin                          bool
	}
	stringFields := []stringField{
		{"POST", "/v1/workflows/onboarding/runs", `{"version":%s}`, "version", false},
		{"POST", "/v1/workflows/onboarding/runs", `{"idempotencyKey":%s}`, "idempotencyKey", false},
		{"POST", "/v1/workflows/onboarding/runs", `{"input":%s}`, "input", false},
		{"POST", "/v1/workflows/onboarding/runs", `{"input":{"email":%s}}`, "input.email", false},
		{"POST", "/v1/workflows/onboarding/runs", `{"input":{%s:1}}`, "input", false},
		{"POST", "/v1/workflows/onboarding/runs", `{"input":[1,{"a":[%s]}]}`, "input[1].a[0]", false},
		{"POST", "/v1/workflows/onboarding/runs", `{%s:{}}`, "request body", false},
		{"POST", runPath + "/signals/verify", `%s`, "payload", false},
		{"POST", runPath + "/signals/verify", `{"userId":%s}`, "payload.userId", false},
		{"POST", runPath + "/signals/verify", `{%s:1}`, "payload", false},
		{"POST", "/v1/events/verify", `%s`, "payload", false},
		{"POST", "/v1/events/verify", `{"userId":[%s]}`, "payload.userId[0]", false},
		{"POST", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":%s,"event":"verify"}`, "idempotencyKey", false},
		{"POST", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"k","event":%s}`, "event", false},
		{"POST", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"k","event":"verify","version":%s}`, "version", false},
		{"POST", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"k","event":"verify","signalId":%s}`, "signalId", false},
		{"POST", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"k","event":"verify","input":{"email":%s}}`, "input.email", false},
		{"POST", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"k","event":"verify","payload":%s}`, "payload", false},
		{"POST", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"k","event":"verify","payload":{"userId":[%s]}}`, "payload.userId[0]", false},
		{"POST", "/v1/events/verify", `{%s:1}`, "payload", false},
		{"POST", "/v1/tokens", `{"name":%s}`, "name", false},
		{"PUT", "/v1/secrets/s1", `{"value":%s}`, "value", false},
		{"POST", "/v1/tenants", `{"id":%s}`, "id", true},
		{"POST", "/v1/tenants", `{"id":"t-new","limits":{"allowedHosts":[%s]}}`, "limits.allowedHosts[0]", true},
		{"PATCH", "/v1/tenants/acme", `{"limits":{"allowedHosts":["ok.example.com",%s]}}`, "limits.allowedHosts[1]", true},
		{"POST", "/v1/tenants/acme/tokens", `{"name":%s}`, "name", true},
		{"PUT", "/v1/tenants/acme/secrets/s1", `{"value":%s}`, "value", true},
	}
	for _, f := range stringFields {
		for _, s := range badStrings {
			add(mistake{name: f.method + " " + f.path + " " + f.naming + ": " + s.class, method: f.method, path: f.path,
				body: fmt.Sprintf(f.template, s.json), admin: f.admin, naming: f.naming})
		}
	}
	// Strings the stores could keep but the API bounds.
	for _, f := range []stringField{
		{"POST", "/v1/workflows/onboarding/runs", `{"version":%q}`, "version", false},
		{"POST", "/v1/workflows/onboarding/runs", `{"idempotencyKey":%q}`, "idempotencyKey", false},
		{"POST", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":%q,"event":"verify"}`, "idempotencyKey", false},
		{"POST", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"k","event":"verify","signalId":%q}`, "signalId", false},
		{"POST", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"k","event":%q}`, "event", false},
		{"POST", "/v1/tokens", `{"name":%q}`, "name", false},
		{"POST", "/v1/tenants", `{"id":%q}`, "id", true},
		{"PATCH", "/v1/tenants/acme", `{"limits":{"allowedHosts":[%q]}}`, "limits.allowedHosts[0]", true},
		{"POST", "/v1/tenants/acme/tokens", `{"name":%q}`, "name", true},
	} {
		add(mistake{name: f.path + " " + f.naming + ": too long", method: f.method, path: f.path,
			body: fmt.Sprintf(f.template, long+long), admin: f.admin, naming: f.naming})
	}
	for _, host := range []string{"", "has space.example.com", "a/b", "*", "ftp://x.example.com", "*.Example.org", "localhost."} {
		add(mistake{name: "allowed host " + host, method: "PATCH", path: "/v1/tenants/acme",
			body: fmt.Sprintf(`{"limits":{"allowedHosts":[%q]}}`, host), admin: true, naming: "limits.allowedHosts[0]"})
	}

	// Values no store keeps, in every JSON value a client sends.
	deep := strings.Repeat("[", 513) + strings.Repeat("]", 513)
	for _, v := range []struct{ class, json string }{
		{"number past 1e1000", "1e1001"},
		{"number below 1e-1000", "1e-1001"},
		{"zero with a huge exponent", "0e-999999999"},
		{"more digits after the point than Postgres keeps", "1." + strings.Repeat("0", 16384)},
		{"nested too deep", deep},
	} {
		add(mistake{name: "input: " + v.class, method: "POST", path: "/v1/workflows/onboarding/runs", body: `{"input":` + v.json + `}`, naming: "input"})
		add(mistake{name: "signal: " + v.class, method: "POST", path: runPath + "/signals/verify", body: v.json, naming: "payload"})
		add(mistake{name: "broadcast: " + v.class, method: "POST", path: "/v1/events/verify", body: v.json, naming: "payload"})
		add(mistake{name: "signal-with-start payload: " + v.class, method: "POST", path: "/v1/workflows/onboarding/signal-with-start", body: `{"idempotencyKey":"k","event":"verify","payload":` + v.json + `}`, naming: "payload"})
		add(mistake{name: "signal-with-start input: " + v.class, method: "POST", path: "/v1/workflows/onboarding/signal-with-start", body: `{"idempotencyKey":"k","event":"verify","input":` + v.json + `}`, naming: "input"})
	}

	// Integers: negative, over their range, over int64, fractions, other types.
	for _, n := range badNumbers {
		add(mistake{name: "retentionDays " + n, method: "POST", path: "/v1/workflows/onboarding/runs",
			body: `{"retentionDays":` + n + `}`, naming: "retentionDays"})
	}
	// A workflow deadline: up to abi.MaxDelay, in milliseconds of an int64.
	for _, n := range []string{"-1", "3153600000001", "9223372036854775808", "1e400", "1.5", `"7"`, "true", "{}"} {
		add(mistake{name: "timeoutMs " + n, method: "POST", path: "/v1/workflows/onboarding/runs",
			body: `{"timeoutMs":` + n + `}`, naming: "timeoutMs"})
		add(mistake{name: "signal-with-start timeoutMs " + n, method: "POST", path: "/v1/workflows/onboarding/signal-with-start",
			body: `{"idempotencyKey":"k","event":"verify","timeoutMs":` + n + `}`, naming: "timeoutMs"})
	}
	limits := []string{"memoryPages", "activationTimeoutMs", "concurrency", "maxModuleBytes", "maxInputBytes",
		"maxOutputBytes", "maxStepOutputBytes", "maxEventBytes", "maxStepsPerRun", "maxBufferedEvents"}
	for _, l := range limits {
		for _, n := range badNumbers {
			add(mistake{name: "create limits." + l + " " + n, method: "POST", path: "/v1/tenants", admin: true,
				body: `{"id":"t-new","limits":{"` + l + `":` + n + `}}`, naming: "limits." + l})
			add(mistake{name: "patch limits." + l + " " + n, method: "PATCH", path: "/v1/tenants/acme", admin: true,
				body: `{"limits":{"` + l + `":` + n + `}}`, naming: "limits." + l})
		}
	}
	for _, v := range []string{`"x"`, "[1]", "{}"} {
		add(mistake{name: "allowedHosts " + v, method: "PATCH", path: "/v1/tenants/acme", admin: true,
			body: `{"limits":{"allowedHosts":` + v + `}}`, naming: "limits.allowedHosts"})
	}
	add(mistake{name: "too many allowed hosts", method: "PATCH", path: "/v1/tenants/acme", admin: true,
		body: `{"limits":{"allowedHosts":["a.example.com"` + strings.Repeat(`,"a.example.com"`, host.MaxAllowedHosts) + `]}}`, naming: "limits.allowedHosts"})
	for _, f := range []struct{ method, path, body, naming string }{
		{"POST", "/v1/workflows/onboarding/runs", `{"version":1}`, "version"},
		{"POST", "/v1/workflows/onboarding/runs", `{"idempotencyKey":["k"]}`, "idempotencyKey"},
		{"POST", "/v1/tokens", `{"name":5}`, "name"},
		{"PUT", "/v1/secrets/s1", `{"value":5}`, "value"},
		{"POST", "/v1/tenants", `{"id":5}`, "id"},
		{"POST", "/v1/tenants", `{"id":"t-new","limits":[]}`, "limits"},
		{"PATCH", "/v1/tenants/acme", `{"limits":"x"}`, "limits"},
	} {
		add(mistake{name: f.path + " " + f.body, method: f.method, path: f.path, body: f.body, admin: strings.HasPrefix(f.path, "/v1/tenants"), naming: f.naming})
	}

	// Strict JSON on every JSON endpoint: exact field names, no unknown or repeated field, one
	// object, and a JSON media type.
	type jsonEndpoint struct {
		method, path, valid string
		admin               bool
	}
	endpoints := []jsonEndpoint{
		{"POST", "/v1/workflows/onboarding/runs", `{"input":{}}`, false},
		{"POST", runPath + "/signals/verify", `{"userId":"u"}`, false},
		{"POST", "/v1/workflows/onboarding/signal-with-start", `{"idempotencyKey":"k","event":"verify"}`, false},
		{"POST", "/v1/events/verify", `{"userId":"u"}`, false},
		{"POST", "/v1/tokens", `{"name":"n"}`, false},
		{"PUT", "/v1/secrets/s1", `{"value":"v"}`, false},
		{"POST", "/v1/tenants", `{"id":"t-new"}`, true},
		{"PATCH", "/v1/tenants/acme", `{"limits":{}}`, true},
		{"POST", "/v1/tenants/acme/tokens", `{"name":"n"}`, true},
		{"PUT", "/v1/tenants/acme/secrets/s1", `{"value":"v"}`, true},
	}
	for _, ep := range endpoints {
		at := ep.method + " " + ep.path
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/jsonx", "application/json; charset=latin1", "json"} {
			add(mistake{name: at + " Content-Type " + ct, method: ep.method, path: ep.path, body: ep.valid, admin: ep.admin,
				header: map[string]string{"Content-Type": ct}, status: http.StatusUnsupportedMediaType, naming: "Content-Type"})
		}
		add(mistake{name: at + " without Content-Type", method: ep.method, path: ep.path, body: ep.valid, admin: ep.admin,
			noCType: true, status: http.StatusUnsupportedMediaType, naming: "Content-Type"})
		// A duplicate key, at the top and inside.
		dup := strings.Replace(ep.valid, "{", "{"+strings.TrimSuffix(strings.TrimPrefix(ep.valid, "{"), "}")+",", 1)
		add(mistake{name: at + " duplicate key", method: ep.method, path: ep.path, body: dup, admin: ep.admin, naming: "duplicate"})
		add(mistake{name: at + " two values", method: ep.method, path: ep.path, body: ep.valid + " " + ep.valid, admin: ep.admin, naming: "request body"})
		add(mistake{name: at + " truncated", method: ep.method, path: ep.path, body: ep.valid[:len(ep.valid)-1], admin: ep.admin, naming: "request body"})
		if strings.Contains(ep.path, "/signals/") || strings.HasPrefix(ep.path, "/v1/events/") {
			continue // the body is the payload, any JSON value with any keys
		}
		// A field name in another case, an unknown field, and a body that is not an object.
		field := ep.valid[2 : strings.Index(ep.valid[2:], `"`)+2]
		upper := strings.ToUpper(field[:1]) + field[1:]
		add(mistake{name: at + " field " + upper, method: ep.method, path: ep.path, body: strings.Replace(ep.valid, field, upper, 1), admin: ep.admin, naming: upper})
		add(mistake{name: at + " field " + strings.ToUpper(field), method: ep.method, path: ep.path, body: strings.Replace(ep.valid, field, strings.ToUpper(field), 1), admin: ep.admin, naming: strings.ToUpper(field)})
		add(mistake{name: at + " unknown field", method: ep.method, path: ep.path, body: `{"nope":1}`, admin: ep.admin, naming: "nope"})
		for _, notObject := range []string{`[]`, `"x"`, `1`, `null`} {
			add(mistake{name: at + " body " + notObject, method: ep.method, path: ep.path, body: notObject, admin: ep.admin, naming: "request body"})
		}
	}
	add(mistake{name: "duplicate key inside the input", method: "POST", path: "/v1/workflows/onboarding/runs", body: `{"input":{"a":{"b":1,"b":2}}}`, naming: "input.a"})
	add(mistake{name: "duplicate key inside a payload", method: "POST", path: "/v1/events/verify", body: `[{"a":1,"a":1}]`, naming: "payload[0]"})
	add(mistake{name: "limits field in another case", method: "PATCH", path: "/v1/tenants/acme", admin: true, body: `{"limits":{"Concurrency":1}}`, naming: "Concurrency"})

	// Path parameters: NUL, invalid UTF-8, too long, and characters a name may not hold.
	badSegments := []struct{ class, segment string }{{"NUL", "a%00b"}, {"invalid UTF-8", "a%FFb"}, {"too long", long}, {"control character", "a%0Ab"}}
	for _, seg := range badSegments {
		s := seg.segment
		add(mistake{name: "start: workflow " + seg.class, method: "POST", path: "/v1/workflows/" + s + "/runs", body: `{}`, naming: "workflow"})
		add(mistake{name: "list: workflow " + seg.class, method: "GET", path: "/v1/workflows/" + s + "/runs", naming: "workflow"})
		add(mistake{name: "get: run " + seg.class, method: "GET", path: "/v1/workflows/onboarding/runs/" + s, status: 404, naming: "run"})
		add(mistake{name: "cancel: run " + seg.class, method: "DELETE", path: "/v1/workflows/onboarding/runs/" + s, status: 404, naming: "run"})
		add(mistake{name: "steps: run " + seg.class, method: "GET", path: "/v1/workflows/onboarding/runs/" + s + "/steps", status: 404, naming: "run"})
		add(mistake{name: "signal: run " + seg.class, method: "POST", path: "/v1/workflows/onboarding/runs/" + s + "/signals/verify", body: `{}`, status: 404, naming: "run"})
		add(mistake{name: "signal: event " + seg.class, method: "POST", path: runPath + "/signals/" + s, body: `{}`, naming: "event"})
		add(mistake{name: "broadcast: event " + seg.class, method: "POST", path: "/v1/events/" + s, body: `{}`, naming: "event"})
		add(mistake{name: "revoke: token " + seg.class, method: "DELETE", path: "/v1/tokens/" + s, status: 404, naming: "token"})
		add(mistake{name: "put: secret " + seg.class, method: "PUT", path: "/v1/secrets/" + s, body: `{"value":"v"}`, naming: "secret"})
		add(mistake{name: "delete: secret " + seg.class, method: "DELETE", path: "/v1/secrets/" + s, naming: "secret"})
		for _, r := range []struct{ method, path, body string }{
			{"GET", "/v1/tenants/" + s, ""},
			{"PATCH", "/v1/tenants/" + s, `{"limits":{}}`},
			{"GET", "/v1/tenants/" + s + "/tokens", ""},
			{"POST", "/v1/tenants/" + s + "/tokens", `{}`},
			{"DELETE", "/v1/tenants/" + s + "/tokens/tok_0", ""},
			{"GET", "/v1/tenants/" + s + "/secrets", ""},
			{"PUT", "/v1/tenants/" + s + "/secrets/s1", `{"value":"v"}`},
		} {
			add(mistake{name: r.method + " tenant " + seg.class + " " + r.path[:min(len(r.path), 40)], method: r.method, path: r.path, body: r.body, admin: true, naming: "tenant"})
		}
		add(mistake{name: "admin revoke: token " + seg.class, method: "DELETE", path: "/v1/tenants/acme/tokens/" + s, admin: true, status: 404, naming: "token"})
		add(mistake{name: "admin put: secret " + seg.class, method: "PUT", path: "/v1/tenants/acme/secrets/" + s, body: `{"value":"v"}`, admin: true, naming: "secret"})
	}
	for _, name := range []string{"a%23b", "a%7Fb"} {
		add(mistake{name: "secret name " + name, method: "PUT", path: "/v1/secrets/" + name, body: `{"value":"v"}`, naming: "secret"})
	}
	add(mistake{name: "workflow name with #", method: "GET", path: "/v1/workflows/a%23b/runs", naming: "workflow"})
	add(mistake{name: "workflow name with an escaped /", method: "POST", path: "/v1/workflows/a%2Fb/runs", body: `{}`, naming: "workflow"})
	for _, auth := range []string{"Bearer \xff\xfe", "Bearer " + strings.Repeat("t", 4096), "bearer x", "Bearer"} {
		add(mistake{name: "Authorization " + auth[:min(len(auth), 12)], method: "GET", path: "/v1/workflows",
			header: map[string]string{"Authorization": auth}, status: http.StatusUnauthorized, naming: "token"})
	}
	add(mistake{name: "tenant id in capitals", method: "GET", path: "/v1/tenants/ACME", admin: true, naming: "tenant"})

	// Query parameters of the run listings.
	for _, list := range []string{"/v1/runs", "/v1/workflows/onboarding/runs"} {
		for _, q := range []struct{ query, naming string }{
			{"limit=0", "limit"}, {"limit=501", "limit"}, {"limit=-1", "limit"}, {"limit=abc", "limit"},
			{"limit=99999999999999999999", "limit"}, {"limit=1.5", "limit"}, {"limit=", "limit"},
			{"status=weird", "status"}, {"status=a%00b", "status"}, {"status=a%FFb", "status"}, {"status=", "status"},
			{"since=yesterday", "since"}, {"since=a%00b", "since"}, {"since=2026-13-01T00:00:00Z", "since"},
			{"since=", "since"}, {"until=a%FFb", "until"}, {"until=2026-01-01", "until"},
			{"cursor=garbage", "cursor"}, {"cursor=a%00b", "cursor"}, {"cursor=a%FFb", "cursor"}, {"cursor=", "cursor"},
			{"input.a%00b=1", "input.a"}, {"input.a%FF=1", "input.a"}, {"input.a=x%00y", "input.a"},
			{"input.a=x%FFy", "input.a"}, {"input.a=%22x%5Cu0000%22", "input.a"}, {"input.a=%22%5Cud800%22", "input.a"},
			{"input.a=%7B%22b%22:1,%22b%22:2%7D", "input.a"}, {"input.a=1e1001", "input.a"},
			{"input.a=0e-99999", "input.a"}, {"input.=1", "input."}, {"input.a..b=1", "input.a..b"},
			{"input.a=1&input.a.b=2", "input.a"}, {"input.a=1&input.a=2", "input.a"},
			{"input." + strings.Repeat("k.", 9) + "k=1", "input."},
			{"nope=1", "nope"}, {"limit=1&limit=2", "limit"}, {"status=running&status=failed", "status"},
			{"a=%zz", "query"}, {"limit=1;status=running", "query"},
		} {
			add(mistake{name: "GET " + list + "?" + q.query, method: "GET", path: list + "?" + q.query, naming: q.naming})
		}
	}
	var many strings.Builder
	for i := range 17 {
		fmt.Fprintf(&many, "input.k%d=1&", i)
	}
	add(mistake{name: "17 input filters", method: "GET", path: "/v1/runs?" + many.String(), naming: "input."})

	// The broadcast's event id, as a parameter and as a header.
	for _, id := range []string{"a%00b", "a%FFb", long, ""} {
		add(mistake{name: "eventId " + id[:min(len(id), 10)], method: "POST", path: "/v1/events/verify?eventId=" + id, body: `{}`, naming: "eventId"})
	}
	for _, id := range []string{"a\xffb", long} {
		add(mistake{name: "Idempotency-Key " + id[:min(len(id), 10)], method: "POST", path: "/v1/events/verify", body: `{}`,
			header: map[string]string{"Idempotency-Key": id}, naming: "Idempotency-Key"})
	}
	add(mistake{name: "eventId and a different Idempotency-Key", method: "POST", path: "/v1/events/verify?eventId=a", body: `{}`,
		header: map[string]string{"Idempotency-Key": "b"}, naming: "Idempotency-Key"})

	// A signal's id, the same way.
	for _, id := range []string{"a%00b", "a%FFb", long, ""} {
		add(mistake{name: "signalId " + id[:min(len(id), 10)], method: "POST", path: runPath + "/signals/verify?signalId=" + id, body: `{}`, naming: "signalId"})
	}
	for _, id := range []string{"a\xffb", long} {
		add(mistake{name: "signal Idempotency-Key " + id[:min(len(id), 10)], method: "POST", path: runPath + "/signals/verify", body: `{}`,
			header: map[string]string{"Idempotency-Key": id}, naming: "Idempotency-Key"})
	}
	add(mistake{name: "signalId and a different Idempotency-Key", method: "POST", path: runPath + "/signals/verify?signalId=a", body: `{}`,
		header: map[string]string{"Idempotency-Key": "b"}, naming: "Idempotency-Key"})

	// Query parameters of the other routes.
	for _, q := range []struct{ method, path, naming string }{
		{"POST", "/v1/modules?replace=maybe", "replace"},
		{"POST", "/v1/modules?replace=true&replace=false", "replace"},
		{"POST", "/v1/modules?nope=1", "nope"},
		{"GET", "/v1/workflows?x=1", "x"},
		{"GET", "/v1/modules?limit=5", "limit"},
		{"GET", "/v1/tokens?all=1", "all"},
		{"POST", "/v1/events/verify?eventid=x", "eventid"},
		{"POST", "/v1/workflows/onboarding/runs?version=1", "version"},
	} {
		add(mistake{name: q.method + " " + q.path, method: q.method, path: q.path, naming: q.naming})
	}
	add(mistake{name: "GET /v1/tenants?x=1", method: "GET", path: "/v1/tenants?x=1", admin: true, naming: "x"})
	return ms
}

// TestClientMistakesAreRefusedNamingTheField: every field of every endpoint, given each class
// of bad value (NUL, unpaired surrogates, invalid UTF-8, too long, out of range, the wrong type,
// the wrong case, repeated, unknown, the wrong media type), is a 4xx whose message names the
// field, on both stores; nothing is logged as an internal error, and nothing is written.
func TestClientMistakesAreRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	for _, kind := range bothStores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			e := setupEnvOn(t, kind, store.Limits{})
			a := newTenant(t, e, "acme", "")
			a.mustCall("POST", "/v1/modules", testenv.Fixture(t, "examples.wasm"), 201)
			run := a.mustCall("POST", "/v1/workflows/onboarding/runs", []byte(`{"input":{"email":"a@example.com","delayMs":1,"verifyTimeoutMs":600000}}`), 201)
			runPath := "/v1/workflows/onboarding/runs/" + run["id"].(string)
			before := snapshot(t, e, a)

			mistakes := clientMistakes(runPath)
			for _, m := range mistakes {
				token := a.token
				if m.admin {
					token = adminToken
				}
				r := send(t, e, m, token)
				var body wire.ErrorBody
				if err := json.Unmarshal(r.body, &body); err != nil || body.Error.Code == "" || body.Error.Message == "" {
					t.Errorf("%s: %d %q is not an error response", m.name, r.status, r.body)
					continue
				}
				if r.status != m.status || !strings.Contains(body.Error.Message, m.naming) {
					t.Errorf("%s: %d %s: %s, want %d naming %q", m.name, r.status, body.Error.Code, body.Error.Message, m.status, m.naming)
				}
			}
			if n := e.errorsLogged.Load(); n != 0 {
				t.Errorf("%d requests were logged as internal errors", n)
			}
			if after := snapshot(t, e, a); after != before {
				t.Errorf("the refused requests changed what is stored:\nbefore %s\nafter  %s", before, after)
			}
			t.Logf("%d client mistakes refused, each naming its field", len(mistakes))
		})
	}
}

// TestGoodRequestsStillPass: the strictness refuses nothing that is right: a JSON media type with
// a UTF-8 charset, escaped characters a store keeps, an escaped surrogate pair, and an empty
// body where the body is optional.
func TestGoodRequestsStillPass(t *testing.T) {
	t.Parallel()
	for _, kind := range bothStores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			e := setupEnvOn(t, kind, store.Limits{})
			a := newTenant(t, e, "acme", "")
			a.mustCall("POST", "/v1/modules", testenv.Fixture(t, "examples.wasm"), 201)
			for _, c := range []struct {
				method, path, body, contentType string
				status                          int
			}{
				{"POST", "/v1/workflows/steps/runs", `{"input":{"n":1,"s":"\u0001\ud83d\ude00\u00e9\/"},"idempotencyKey":"\u00e9"}`, "application/json; charset=utf-8", 201},
				{"POST", "/v1/workflows/steps/runs", `{"input":{"n":1},"retentionDays":2147483647}`, "Application/JSON", 201},
				{"POST", "/v1/workflows/steps/runs", ``, "", 201},
				{"POST", "/v1/workflows/steps/runs", `{"input":{"n":1,"x":[1e1000,-1e-1000,0.5e-999,0e-1000]}}`, "application/json", 201},
				{"POST", "/v1/tokens", ``, "", 201},
				{"POST", "/v1/events/nobody-waits", ``, "", 202},
				{"POST", "/v1/events/nobody-waits?eventId=%C3%A9", `"\ud83d\ude00"`, "application/json", 202},
				{"PUT", "/v1/secrets/s%C3%A9", `{"value":"v-of-8-bytes"}`, "application/json", 200},
				{"GET", "/v1/runs?input.n=1&input.s=%C3%A9&limit=500&status=completed&since=0001-01-01T00:00:00Z&until=9999-12-31T23:59:59.999999999%2B14:00", ``, "", 200},
			} {
				req, err := http.NewRequest(c.method, e.srv.URL+c.path, strings.NewReader(c.body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+a.token)
				if c.contentType != "" {
					req.Header.Set("Content-Type", c.contentType)
				}
				r := do(t, e, req)
				if r.status != c.status {
					t.Errorf("%s %s %s: %d %s, want %d", c.method, c.path, c.body, r.status, r.body, c.status)
				}
			}
			admin := tenantClient{t: t, e: e, id: "admin", token: adminToken}
			admin.mustCall("PATCH", "/v1/tenants/acme", []byte(`{"limits":{"memoryPages":65536,"activationTimeoutMs":3600000,"concurrency":100000,`+
				`"maxModuleBytes":1073741824,"maxInputBytes":67108864,"maxOutputBytes":67108864,"maxStepOutputBytes":67108864,`+
				`"maxEventBytes":67108864,"maxStepsPerRun":1000000,"maxBufferedEvents":100000,"allowedHosts":["api.example.com","*.example.org","127.0.0.1","[::1]"]}}`), 200)
			if n := e.errorsLogged.Load(); n != 0 {
				t.Errorf("%d requests were logged as internal errors", n)
			}
		})
	}
}

// send makes the mistake's request with token.
func send(t *testing.T, e *env, m mistake, token string) response {
	t.Helper()
	var body io.Reader
	if m.body != "" {
		body = strings.NewReader(m.body)
	}
	req, err := http.NewRequest(m.method, e.srv.URL+m.path, body)
	if err != nil {
		t.Fatalf("%s: %v", m.name, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if m.body != "" && !m.noCType {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range m.header {
		req.Header[k] = []string{v} // as is: a test of invalid bytes must not be cleaned on the way
	}
	return do(t, e, req)
}

func do(t *testing.T, e *env, req *http.Request) response {
	t.Helper()
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, out}
}

// snapshot is what the tenant and the admin can read back of what requests write (runs,
// tokens, secrets, tenants and their limits), to show that refused requests wrote nothing.
func snapshot(t *testing.T, e *env, a tenantClient) string {
	t.Helper()
	admin := tenantClient{t: t, e: e, id: "admin", token: adminToken}
	var parts []string
	field := func(client tenantClient, path, list, key string) {
		for _, item := range client.mustCall("GET", path, nil, 200)[list].([]any) {
			parts = append(parts, fmt.Sprintf("%s %v", list, item.(map[string]any)[key]))
		}
	}
	field(a, "/v1/runs?limit=500", "runs", "id")
	field(a, "/v1/tokens", "tokens", "id")
	field(a, "/v1/secrets", "secrets", "name")
	field(admin, "/v1/tenants", "tenants", "id")
	field(admin, "/v1/tenants", "tenants", "limits")
	return strings.Join(parts, "; ")
}
