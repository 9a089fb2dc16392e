package api_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/postgres"
)

// TestSecretValueBounds: a value under 8 bytes, or one inside the redaction marker, is a 400
// naming the rule; 8 bytes is enough. Before, any value of 1 byte or more was stored, and the
// host never redacted values under 4 bytes.
func TestSecretValueBounds(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{})
	a := newTenant(t, e, "bounds", "")
	for value, want := range map[string]string{
		"x":            "the minimum is 8",
		"abc":          "the minimum is 8",
		"1234567":      "the minimum is 8",
		"redacted":     "part of the redaction marker",
		"[redacted]":   "part of the redaction marker",
		`\"[redacted]`: "part of the redaction marker",
	} {
		r := a.call("PUT", "/v1/secrets/s", []byte(`{"value":"`+value+`"}`))
		if r.status != 400 || r.errorCode(t) != "invalid_request" || !strings.Contains(string(r.body), want) {
			t.Errorf("value %q: %d %s, want 400 invalid_request saying %q", value, r.status, r.body, want)
		}
	}
	a.mustCall("PUT", "/v1/secrets/s", []byte(`{"value":"12345678"}`), 200)
}

// TestSecretsNeedAKey: a daemon on Postgres without a key refuses to store a secret with 503
// secrets_disabled, naming the flag.
func TestSecretsNeedAKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: testenv.Schema(t, "wfhost_api"), MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Store: st, Runtime: testenv.Runtime(t), LeaseFor: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const token = "keyless-tenant-token"
	if err := eng.EnsureToken(ctx, store.DefaultTenant, token, "test"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Config{Service: eng.Service, Store: st}))
	t.Cleanup(srv.Close)
	r := call(t, srv, "PUT", "/v1/secrets/s", token, []byte(`{"value":"a good long value"}`))
	if r.status != 503 || r.errorCode(t) != "secrets_disabled" || !strings.Contains(string(r.body), "--secrets-key-file") {
		t.Fatalf("PUT without a key: %d %s", r.status, r.body)
	}
	if list := call(t, srv, "GET", "/v1/secrets", token, nil); list.status != 200 || strings.Contains(string(list.body), `"s"`) {
		t.Fatalf("the refused secret is listed: %d %s", list.status, list.body)
	}
}
