package api_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestHooksOverHTTP: a tenant's hooks through the API, on both stores: set (created, then
// replaced), listed, a start hook firing when a run ends (its delivery listed by the ended
// run and by the run it started), a webhook's signing secret shown once and rotated, deleted;
// another tenant sees none of it.
func TestHooksOverHTTP(t *testing.T) {
	t.Parallel()
	for _, kind := range bothStores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			e := setupEnvOn(t, kind, store.Limits{})
			a := newTenant(t, e, "hooks-a", `{"allowedHosts":["https://hooks.example.com"]}`)
			b := newTenant(t, e, "hooks-b", "")
			a.mustCall("POST", "/v1/modules", testenv.Fixture(t, "examples.wasm"), 201)

			start := []byte(`{"workflow":"steps","when":["completed"],"start":{"workflow":"steps","version":"1"}}`)
			h := a.mustCall("PUT", "/v1/hooks/then", start, 201)
			if h["source"] != "tenant" || h["signingSecret"] != nil || h["start"].(map[string]any)["workflow"] != "steps" {
				t.Fatalf("created: %v", h)
			}
			a.mustCall("PUT", "/v1/hooks/then", []byte(`{"workflow":"steps","when":["failed"],"start":{"workflow":"steps"}}`), 200)
			hook := a.mustCall("PUT", "/v1/hooks/ops", []byte(`{"when":["failed","cancelled"],"webhook":"https://hooks.example.com/in"}`), 201)
			secret, _ := hook["signingSecret"].(string)
			if !strings.HasPrefix(secret, "whsec_") {
				t.Fatalf("the first webhook shows no secret: %v", hook)
			}
			if again := a.mustCall("PUT", "/v1/hooks/ops", []byte(`{"when":["failed"],"webhook":"https://hooks.example.com/in"}`), 200); again["signingSecret"] != nil {
				t.Fatalf("the secret is shown again: %v", again)
			}
			rotated := a.mustCall("POST", "/v1/hooks/signing-secret", nil, 200)["signingSecret"].(string)
			if !strings.HasPrefix(rotated, "whsec_") || rotated == secret {
				t.Fatalf("rotated: %q", rotated)
			}
			// The examples module's digest workflow declares two hooks (its onEnd), listed as
			// the module's beside the tenant's own.
			list := a.mustCall("GET", "/v1/hooks", nil, 200)["hooks"].([]any)
			if len(list) != 4 || list[0].(map[string]any)["id"] != "onEnd:digest@1#0" || list[0].(map[string]any)["source"] != "module" ||
				list[1].(map[string]any)["webhook"] != "https://ops.example.com/wfhost/digest" ||
				list[2].(map[string]any)["id"] != "ops" || list[3].(map[string]any)["when"].([]any)[0] != "failed" {
				t.Fatalf("listed: %v", list)
			}
			if other := b.mustCall("GET", "/v1/hooks", nil, 200)["hooks"].([]any); len(other) != 0 {
				t.Fatalf("tenant B sees %v", other)
			}
			if r := b.call("DELETE", "/v1/hooks/then", nil); r.status != 404 {
				t.Fatalf("B deletes A's hook: %d %s", r.status, r.body)
			}

			// A run that fails fires "then": its start is listed by the ended run and by the run it started.
			a.mustCall("PUT", "/v1/hooks/then", []byte(`{"workflow":"steps","when":["completed"],"start":{"workflow":"steps"}}`), 200)
			a.mustCall("DELETE", "/v1/hooks/ops", nil, 200)
			id, run := a.runOver("steps", `{"n":1}`)
			if run["status"] != "completed" {
				t.Fatalf("run: %v", run)
			}
			var d map[string]any
			if err := testenv.Poll(t, 10*time.Second, func() error {
				ds := a.mustCall("GET", "/v1/hooks/deliveries?runId="+id, nil, 200)["deliveries"].([]any)
				if len(ds) != 1 {
					return fmt.Errorf("deliveries %v", ds)
				}
				d = ds[0].(map[string]any)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			started, _ := d["startedRunId"].(string)
			if d["status"] != "delivered" || d["kind"] != "start" || started == "" || d["depth"] != float64(1) {
				t.Fatalf("delivery: %v", d)
			}
			by := a.mustCall("GET", "/v1/hooks/deliveries?startedRunId="+started, nil, 200)["deliveries"].([]any)
			if len(by) != 1 || by[0].(map[string]any)["runId"] != id {
				t.Fatalf("triggeredBy of %s: %v", started, by)
			}
			trig, _ := a.mustCall("GET", "/v1/workflows/steps/runs/"+started, nil, 200)["triggeredBy"].(map[string]any)
			if trig["kind"] != "hook" || trig["runId"] != id || trig["hookId"] != "then" {
				t.Fatalf("the started run's triggeredBy: %v", trig)
			}
			// A client's start names the token it came with: tenant A's one token.
			tokens := a.mustCall("GET", "/v1/tokens", nil, 200)["tokens"].([]any)
			if trig, _ := a.mustCall("GET", "/v1/workflows/steps/runs/"+id, nil, 200)["triggeredBy"].(map[string]any); trig["kind"] != "api" ||
				len(tokens) != 1 || trig["tokenId"] != tokens[0].(map[string]any)["id"] {
				t.Fatalf("a client's start's triggeredBy: %v, want the token of %v", trig, tokens)
			}
			if ds := b.mustCall("GET", "/v1/hooks/deliveries?runId="+id, nil, 200)["deliveries"].([]any); len(ds) != 0 {
				t.Fatalf("tenant B sees A's deliveries: %v", ds)
			}
			a.mustCall("DELETE", "/v1/hooks/then", nil, 200)
		})
	}
}

// TestHooksRefuseBadInput: malformed, oversized, non-UTF-8 and hostile hooks and filters get
// a 400 (or 404, 413, 429) with the fault named, and change nothing.
func TestHooksRefuseBadInput(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{})
	a := newTenant(t, e, "hooks-bad", `{"allowedHosts":["https://hooks.example.com"]}`)
	for _, c := range []struct {
		path, body string
		status     int
		fault      string
	}{
		{"/v1/hooks/ok", `{"when":["completed"]}`, 400, "exactly one of start and webhook"},
		{"/v1/hooks/ok", `{"when":["completed"],"start":{"workflow":"x"},"webhook":"https://hooks.example.com"}`, 400, "exactly one"},
		{"/v1/hooks/ok", `{"when":[],"start":{"workflow":"x"}}`, 400, "when is empty"},
		{"/v1/hooks/ok", `{"when":["done"],"start":{"workflow":"x"}}`, 400, "is not one of"},
		{"/v1/hooks/ok", `{"when":["failed","failed"],"start":{"workflow":"x"}}`, 400, "named twice"},
		{"/v1/hooks/ok", `{"when":["failed"],"start":{"workflow":"a/b"}}`, 400, "start workflow name"},
		{"/v1/hooks/ok", `{"workflow":"","when":["failed"],"start":{"workflow":""}}`, 400, "start workflow name is empty"},
		{"/v1/hooks/ok", `{"workflow":"x/y","when":["failed"],"start":{"workflow":"x"}}`, 400, "workflow name"},
		{"/v1/hooks/ok", `{"when":["failed"],"webhook":"https://evil.example.net/"}`, 400, "not in the tenant's outbound allowlist"},
		{"/v1/hooks/ok", `{"when":["failed"],"webhook":"http://169.254.169.254/latest"}`, 400, "not in the tenant's outbound allowlist"},
		{"/v1/hooks/ok", `{"when":["failed"],"webhook":"javascript:alert(1)"}`, 400, "scheme must be http or https"},
		{"/v1/hooks/ok", `{"when":["failed"],"webhook":"https://u:p@hooks.example.com/"}`, 400, "user information"},
		{"/v1/hooks/ok", `{"when":["failed"],"webhook":"https://hooks.example.com/` + strings.Repeat("a", 3000) + `"}`, 400, "the limit is 2048"},
		{"/v1/hooks/ok", `{"when":["failed"],"webhook":"https://hooks.example.com/","extra":1}`, 400, "extra"},
		{"/v1/hooks/ok", `{"when":"failed"}`, 400, ""},
		{"/v1/hooks/ok", "{\"when\":[\"failed\"],\"start\":{\"workflow\":\"\xff\xfe\"}}", 400, ""},
		{"/v1/hooks/ok", `not json`, 400, ""},
		{"/v1/hooks/ok", `{"when":["` + strings.Repeat("completed\",\"", 10000) + `failed"],"start":{"workflow":"x"}}`, 400, ""},
		{"/v1/hooks/bad:id", `{"when":["failed"],"start":{"workflow":"x"}}`, 400, "hook id"},
		{"/v1/hooks/" + strings.Repeat("h", 101), `{"when":["failed"],"start":{"workflow":"x"}}`, 400, "hook id"},
		{"/v1/hooks/ok", `{"when":["failed"],"start":{"workflow":"x"},"pad":"` + strings.Repeat("x", 3<<20) + `"}`, 413, ""},
	} {
		r := a.call("PUT", c.path, []byte(c.body))
		if r.status != c.status || !strings.Contains(string(r.body), c.fault) {
			t.Errorf("PUT %.60s %.100s: %d %.300s, want %d with %q", c.path, c.body, r.status, r.body, c.status, c.fault)
		}
	}
	if list := a.mustCall("GET", "/v1/hooks", nil, 200)["hooks"].([]any); len(list) != 0 {
		t.Fatalf("a refused hook was kept: %v", list)
	}
	for _, q := range []string{"runId=nope", "startedRunId=1", "status=done", "limit=0", "limit=501", "limit=x", "bogus=1", "status=failed&status=pending"} {
		if r := a.call("GET", "/v1/hooks/deliveries?"+q, nil); r.status != 400 {
			t.Errorf("deliveries?%s: %d %s, want 400", q, r.status, r.body)
		}
	}
	if r := a.call("DELETE", "/v1/hooks/nope", nil); r.status != 404 {
		t.Errorf("delete unknown: %d %s", r.status, r.body)
	}
	// A tenant's hooks are bounded: the 65th is refused.
	for i := range 64 {
		a.mustCall("PUT", "/v1/hooks/h"+strconv.Itoa(i), []byte(`{"when":["failed"],"start":{"workflow":"x"}}`), 201)
	}
	if r := a.call("PUT", "/v1/hooks/one-more", []byte(`{"when":["failed"],"start":{"workflow":"x"}}`)); r.status != 429 {
		t.Errorf("the 65th hook: %d %s, want 429", r.status, r.body)
	}
	a.mustCall("PUT", "/v1/hooks/h0", []byte(`{"when":["completed"],"start":{"workflow":"x"}}`), 200)
}
