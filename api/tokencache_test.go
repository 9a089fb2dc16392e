package api_test

import (
	"strings"
	"testing"

	"github.com/wfhost/wfhost/store"
)

// TestTokenCacheOverHTTP: the daemon keeps the tokens it authenticated (engine/tokens.go), and
// still a token revoked through it is refused at the next request, by either revocation
// route, while the tenant's other tokens, already kept, keep working. Hostile tokens are 401
// with the same message, never 500. On both stores.
func TestTokenCacheOverHTTP(t *testing.T) {
	t.Parallel()
	for _, kind := range bothStores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			e := setupEnvOn(t, kind, store.Limits{})
			admin := tenantClient{t: t, e: e, id: "admin", token: adminToken}
			a := newTenant(t, e, "acme", `{}`)
			mint := func(name string) (id string, c tenantClient) {
				tok := a.mustCall("POST", "/v1/tokens", []byte(`{"name":"`+name+`"}`), 201)
				return tok["id"].(string), tenantClient{t: t, e: e, id: "acme", token: tok["secret"].(string)}
			}
			ciID, ci := mint("ci")
			botID, bot := mint("bot")
			for range 3 { // kept after the first
				ci.mustCall("GET", "/v1/workflows", nil, 200)
				bot.mustCall("GET", "/v1/workflows", nil, 200)
			}
			refused := func(c tenantClient, what string) {
				t.Helper()
				r := c.call("GET", "/v1/workflows", nil)
				if r.status != 401 || r.errorCode(t) != "unauthorized" || !strings.Contains(string(r.body), "unknown or revoked") {
					t.Fatalf("%s: %d %s, want 401 unauthorized", what, r.status, r.body)
				}
			}

			a.mustCall("DELETE", "/v1/tokens/"+ciID, nil, 200)
			refused(ci, "a kept token revoked by its tenant")
			bot.mustCall("GET", "/v1/workflows", nil, 200)
			admin.mustCall("DELETE", "/v1/tenants/acme/tokens/"+botID, nil, 200)
			refused(bot, "a kept token revoked by the admin")
			a.mustCall("GET", "/v1/workflows", nil, 200)

			// A token of another tenant is that tenant's, kept or not.
			g := newTenant(t, e, "globex", `{}`)
			for range 2 {
				if runs := g.mustCall("GET", "/v1/runs", nil, 200)["runs"].([]any); len(runs) != 0 {
					t.Fatalf("globex sees runs: %v", runs)
				}
			}

			for name, bad := range map[string]string{
				"unknown":                      a.token + "x",
				"non-UTF-8":                    "wfh_\xff\xfe",
				"only spaces":                  "    ",
				"4 KiB":                        strings.Repeat("t", 4096),
				"the admin's, one byte longer": adminToken + "x",
				"injection":                    "' OR '1'='1",
				"a token's hash":               "3f2a" + strings.Repeat("0", 60),
			} {
				for range 2 { // never kept: the second is refused as the first
					r := call(t, e.srv, "GET", "/v1/workflows", bad, nil)
					if r.status != 401 || r.errorCode(t) != "unauthorized" {
						t.Errorf("%s token: %d %s, want 401 unauthorized", name, r.status, r.body)
					}
				}
			}
			if n := e.errorsLogged.Load(); n != 0 {
				t.Fatalf("%d errors logged", n)
			}
		})
	}
}
