package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestFlowControlOverHTTP: on both stores, a start's priority is checked, a start without a
// key is a 400, a debounced start answers the pending run with 200, and GET run says why a
// run under flow control waits (its key and limit).
func TestFlowControlOverHTTP(t *testing.T) {
	t.Parallel()
	for _, kind := range bothStores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			e := setupEnvOn(t, kind, store.Limits{})
			ctx := context.Background()
			const token = "flow-token"
			if err := e.eng.EnsureToken(ctx, store.DefaultTenant, token, "test"); err != nil {
				t.Fatal(err)
			}
			wasm := testenv.Fixture(t, "examples.wasm")
			if _, err := e.eng.Deploy(ctx, store.DefaultTenant, wasm, false); err != nil {
				t.Fatal(err)
			}
			// Bind "steps" again with flow control, as a module declaring it would bind it.
			sum := sha256.Sum256(wasm)
			digest := hex.EncodeToString(sum[:])
			if _, err := e.st.PutModule(ctx, store.Module{TenantID: store.DefaultTenant, Digest: digest, Size: len(wasm), ABIVersion: abi.Version, Bytes: wasm},
				[]store.Workflow{{TenantID: store.DefaultTenant, Name: "steps", Version: "1", Digest: digest,
					Flow: &abi.Flow{Concurrency: &abi.FlowConcurrency{Limit: 1},
						Debounce: &abi.FlowDebounce{Key: "$.user", PeriodMs: 3_600_000}}}}, true); err != nil {
				t.Fatal(err)
			}
			start := func(body string) response {
				return call(t, e.srv, "POST", "/v1/workflows/steps/runs", token, []byte(body))
			}
			first := start(`{"input":{"user":"ann","n":1}}`)
			if first.status != http.StatusCreated {
				t.Fatalf("first start: %d %s", first.status, first.body)
			}
			id := first.json(t)["id"].(string)
			again := start(`{"input":{"user":"ann","n":2}}`)
			if again.status != http.StatusOK || again.json(t)["id"] != id {
				t.Fatalf("debounced start: %d %s, want 200 with run %s", again.status, again.body, id)
			}
			got := call(t, e.srv, "GET", "/v1/workflows/steps/runs/"+id, token, nil).json(t)
			if in := got["input"].(map[string]any); in["n"] != float64(2) {
				t.Fatalf("debounced run's input = %v, want the last start's", in)
			}
			if fl := got["flow"].(map[string]any); fl["waiting"] != "debounce" || fl["debounce"].(map[string]any)["key"] != "ann" {
				t.Fatalf("debounced run's flow = %v", fl)
			}
			held := start(`{"input":{"user":"bob"},"priority":600}`)
			if held.status != http.StatusCreated {
				t.Fatalf("second key's start: %d %s", held.status, held.body)
			}
			hv := call(t, e.srv, "GET", "/v1/workflows/steps/runs/"+held.json(t)["id"].(string), token, nil).json(t)
			fl := hv["flow"].(map[string]any)
			conc := fl["concurrency"].(map[string]any)
			if fl["waiting"] != "concurrency" || conc["limit"] != float64(1) || conc["active"] != float64(1) || conc["held"] != true || fl["priority"] != float64(600) {
				t.Fatalf("held run's flow = %v", fl)
			}
			for name, body := range map[string]string{
				"no key":            `{"input":{"n":1}}`,
				"key an object":     `{"input":{"user":{"a":1}}}`,
				"key of 300 bytes":  `{"input":{"user":"` + strings.Repeat("u", 300) + `"}}`,
				"priority too high": `{"input":{"user":"x"},"priority":601}`,
				"priority a string": `{"input":{"user":"x"},"priority":"high"}`,
				"priority huge":     `{"input":{"user":"x"},"priority":1e30}`,
			} {
				r := start(body)
				if r.status != http.StatusBadRequest {
					t.Errorf("%s: %d %s, want 400", name, r.status, r.body)
				}
			}
			if n := e.errorsLogged.Load(); n != 0 {
				t.Fatalf("%d errors logged", n)
			}
		})
	}
}
