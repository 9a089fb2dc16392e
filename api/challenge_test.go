package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/store"
)

// TestUnauthorizedCarriesAChallenge: every 401, on every route, says which scheme to
// authenticate with (RFC 6750 §3): WWW-Authenticate: Bearer realm="wfhost", and
// error="invalid_token" as well when a bearer token was sent and will not do (unknown, revoked,
// or the wrong kind). A header of another scheme, or a bearer header with no token, sent none.
func TestUnauthorizedCarriesAChallenge(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{})
	a := newTenant(t, e, "acme", "")
	tok := a.mustCall("POST", "/v1/tokens", []byte(`{"name":"soon revoked"}`), 201)
	a.mustCall("DELETE", "/v1/tokens/"+tok["id"].(string), nil, 200)

	const (
		realm   = `Bearer realm="wfhost"`
		invalid = `Bearer realm="wfhost", error="invalid_token"`
	)
	for _, pattern := range e.handler.Routes() {
		method, path, _ := strings.Cut(pattern, " ")
		path = strings.NewReplacer("{name}", "steps", "{id}", "00000000-0000-0000-0000-000000000000", "{event}", "e",
			"{token}", "tok_x", "{tenant}", "acme", "{secret}", "s").Replace(path)
		wrongKind := "Bearer " + adminToken
		if strings.HasPrefix(path, "/v1/tenants") {
			wrongKind = "Bearer " + a.token
		}
		for _, c := range []struct{ name, header, challenge string }{
			{"no header", "", realm},
			{"basic", "Basic YWJjOmRlZg==", realm},
			{"empty bearer", "Bearer ", realm},
			{"unknown", "Bearer wfh_unknown", invalid},
			{"unknown, scheme lower-cased", "bearer wfh_unknown", invalid},
			{"non-UTF-8", "Bearer wfh_\xff\xfe", invalid},
			{"revoked", "Bearer " + tok["secret"].(string), invalid},
			{"wrong kind", wrongKind, invalid},
		} {
			req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if c.header != "" {
				req.Header.Set("Authorization", c.header)
			}
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s, %s: %d, want 401", pattern, c.name, resp.StatusCode)
				continue
			}
			if got := resp.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != c.challenge {
				t.Errorf("%s, %s: WWW-Authenticate %q, want %q", pattern, c.name, got, c.challenge)
			}
		}
	}
}

// TestBearerSchemeIsCaseInsensitive: RFC 7235 makes the auth scheme case-insensitive, so a
// client that writes `bearer` or `BEARER` is authenticated like one that writes `Bearer`.
func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{})
	a := newTenant(t, e, "acme", "")
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		req, err := http.NewRequest("GET", e.srv.URL+"/v1/workflows", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", scheme+" "+a.token)
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("scheme %q: %d, want 200", scheme, resp.StatusCode)
		}
	}
}
