package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store/postgres"
)

// TestReadiness: /readyz is 503 until the store's migrations are applied and once the store
// is gone, 200 in between; /healthz is 200 throughout.
func TestReadiness(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: testenv.Schema(t, "wfhost_ready"), MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Config{Ready: api.StoreReady(st)}))
	defer srv.Close()

	probe := func(path string) (int, string) {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body struct {
			Status string `json:"status"`
			Error  struct {
				Code, Message string
			} `json:"error"`
		}
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return res.StatusCode, body.Status + body.Error.Code + ": " + body.Error.Message
	}
	expect := func(path string, code int, says string) {
		t.Helper()
		got, msg := probe(path)
		if got != code || !strings.Contains(msg, says) {
			t.Fatalf("%s = %d %q, want %d saying %q", path, got, msg, code, says)
		}
	}

	expect("/healthz", http.StatusOK, "ok")
	expect("/readyz", http.StatusServiceUnavailable, "not_ready: store migrations are not current")
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	expect("/readyz", http.StatusOK, "ready")
	st.Close()
	expect("/readyz", http.StatusServiceUnavailable, "not_ready: store unreachable")
	expect("/healthz", http.StatusOK, "ok")
}

// TestStoreUnavailableIs503: while the store cannot be reached (a restart, a failover), every
// request that needs it is answered 503 with Retry-After, never 500: a client or a load
// balancer knows to try again, and /readyz says the same.
func TestStoreUnavailableIs503(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := postgres.Open(ctx, postgres.Config{URL: "postgres://postgres@127.0.0.1:1/test?connect_timeout=2", Schema: "unreachable"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng, err := engine.New(engine.Config{Store: st, Runtime: testenv.Runtime(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Config{Service: eng.Service, Store: st, AdminToken: adminToken, Ready: api.StoreReady(st)}))
	defer srv.Close()
	for _, c := range []struct{ method, path, token, body string }{
		{"POST", "/v1/workflows/steps/runs", "some-tenant-token", `{"input":{}}`},
		{"GET", "/v1/runs", "some-tenant-token", ""},
		{"POST", "/v1/tenants", adminToken, `{"id":"acme"}`},
		{"GET", "/v1/tenants", adminToken, ""},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+c.token)
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Code, Message string }
		}
		_ = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || body.Error.Code != "unavailable" {
			t.Errorf("%s %s = %d (Retry-After %q) %+v, want 503 unavailable with Retry-After", c.method, c.path, res.StatusCode, res.Header.Get("Retry-After"), body.Error)
		}
	}
	res, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz = %d while the store is unreachable, want 503", res.StatusCode)
	}
}
