package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/api"
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
