package api_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestConsoleReads: the listing's version and idempotency key filters, counts that follow the
// filters, a journal read a page at a time, on both stores, and each with the malformed,
// oversized, non-UTF-8 and hostile parameters a client could send.
func TestConsoleReads(t *testing.T) {
	t.Parallel()
	for _, kind := range bothStores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			e := setupEnvOn(t, kind, store.Limits{})
			a := newTenant(t, e, "console", "")
			a.mustCall("POST", "/v1/modules", testenv.Fixture(t, "examples.wasm"), 201)
			var ids []string
			for i := range 3 {
				r := a.mustCall("POST", "/v1/workflows/steps/runs", []byte(fmt.Sprintf(`{"input":{"n":%d},"idempotencyKey":"k%d"}`, 5+i, i)), 201)
				ids = append(ids, r["id"].(string))
			}
			for _, id := range ids {
				if r := a.mustCall("GET", "/v1/workflows/steps/runs/"+id+"?wait=30", nil, 200); r["status"] != "completed" {
					t.Fatalf("run %s is %v, want completed", id, r["status"])
				}
			}
			list := func(q string) []string {
				t.Helper()
				var out []string
				for _, r := range a.mustCall("GET", "/v1/runs?"+q, nil, 200)["runs"].([]any) {
					out = append(out, r.(map[string]any)["id"].(string))
				}
				return out
			}
			for q, want := range map[string][]string{
				"idempotencyKey=k1":                  {ids[1]},
				"idempotencyKey=k1&version=1":        {ids[1]},
				"idempotencyKey=k1&version=2":        nil,
				"version=1":                          {ids[2], ids[1], ids[0]},
				"idempotencyKey=%27%20OR%201%3D1--":  nil,
				"idempotencyKey=k1&status=completed": {ids[1]},
			} {
				if got := list(q); !slices.Equal(got, want) {
					t.Errorf("?%s: %v, want %v", q, got, want)
				}
			}
			counts := func(path string) (map[string]any, float64) {
				t.Helper()
				r := a.mustCall("GET", path, nil, 200)
				return r["counts"].(map[string]any), r["total"].(float64)
			}
			c, total := counts("/v1/runs/counts")
			if total != 3 || c["completed"] != float64(3) || len(c) != 8 || c["continued"] != float64(0) || c["paused"] != float64(0) {
				t.Errorf("counts: %v, total %v; want 3 completed of 3, all 8 statuses named", c, total)
			}
			for path, want := range map[string]float64{
				"/v1/runs/counts?idempotencyKey=k2":                                     1,
				"/v1/runs/counts?version=9":                                             0,
				"/v1/runs/counts?input.n=6":                                             1,
				"/v1/workflows/steps/runs/counts?input.n=6":                             1,
				"/v1/workflows/onboarding/runs/counts":                                  0,
				"/v1/runs/counts?since=2000-01-01T00:00:00Z":                            3,
				"/v1/runs/counts?until=2000-01-01T00:00:00Z":                            0,
				"/v1/runs/counts?input.n=6&idempotencyKey=k0":                           0,
				"/v1/workflows/steps/runs/counts?version=1":                             3,
				"/v1/runs/counts?idempotencyKey=" + url.QueryEscape("k2\u00e9<script>"): 0,
			} {
				if _, got := counts(path); got != want {
					t.Errorf("%s: total %v, want %v", path, got, want)
				}
			}

			// The journal of the run of n=7, whole and a page at a time.
			run := "/v1/workflows/steps/runs/" + ids[2]
			whole := a.mustCall("GET", run+"/steps", nil, 200)
			if _, has := whole["nextCursor"]; has {
				t.Errorf("a whole read has a nextCursor: %v", whole)
			}
			all := whole["steps"].([]any)
			if len(all) < 3 {
				t.Fatalf("the run has %d journal entries, want a few", len(all))
			}
			var paged []any
			pages := 0
			for cursor := ""; ; pages++ {
				q := "?limit=2"
				if cursor != "" {
					q += "&cursor=" + cursor
				}
				p := a.mustCall("GET", run+"/steps"+q, nil, 200)
				paged = append(paged, p["steps"].([]any)...)
				next, _ := p["nextCursor"].(string)
				if next == "" {
					break
				}
				if pages > len(all) {
					t.Fatalf("paging does not end: cursor %q", next)
				}
				cursor = next
			}
			if fmt.Sprint(paged) != fmt.Sprint(all) {
				t.Errorf("the pages (%d entries in %d pages) differ from the whole journal (%d)", len(paged), pages+1, len(all))
			}
			if p := a.mustCall("GET", run+"/steps?cursor=1000", nil, 200); len(p["steps"].([]any)) != 0 || p["nextCursor"] != nil {
				t.Errorf("a page past the end: %v", p)
			}
			if p := a.mustCall("GET", run+"/steps?cursor=1", nil, 200); len(p["steps"].([]any)) != len(all)-1 {
				t.Errorf("a cursor alone: %d entries, want the %d from entry 1 on", len(p["steps"].([]any)), len(all)-1)
			}
			a.mustCall("GET", "/v1/workflows/steps/runs/00000000-0000-0000-0000-000000000000/steps?limit=5", nil, 404)

			// A completed run has no lease holder to show.
			if r := a.mustCall("GET", run, nil, 200); r["lease"] != nil {
				t.Errorf("a completed run shows a lease: %v", r["lease"])
			}

			long := strings.Repeat("v", 300)
			for _, bad := range []string{
				"/v1/runs?version=", "/v1/runs?idempotencyKey=", "/v1/runs?version=" + long,
				"/v1/runs?idempotencyKey=" + strings.Repeat("k", 201), "/v1/runs?version=%FF", "/v1/runs?idempotencyKey=a%00b",
				"/v1/runs?version=1&version=2",
				"/v1/runs/counts?status=completed", "/v1/runs/counts?limit=1", "/v1/runs/counts?cursor=x",
				"/v1/runs/counts?version=", "/v1/runs/counts?version=%C3%28", "/v1/runs/counts?idempotencyKey=" + strings.Repeat("k", 201),
				"/v1/runs/counts?since=yesterday", "/v1/runs/counts?input.=1", "/v1/runs/counts?%zz",
				"/v1/workflows/%FF/runs/counts", "/v1/workflows/" + long + "/runs/counts",
				run + "/steps?limit=0", run + "/steps?limit=1001", run + "/steps?limit=abc", run + "/steps?limit=-1",
				run + "/steps?cursor=", run + "/steps?cursor=-1", run + "/steps?cursor=abc", run + "/steps?cursor=99999999999",
				run + "/steps?cursor=%FF", run + "/steps?cursor=1&cursor=2", run + "/steps?cursor=+1", run + "/steps?wait=1",
			} {
				if r := a.call("GET", bad, nil); r.status != 400 {
					t.Errorf("GET %s: %d %s, want 400", bad, r.status, r.body)
				} else if msg := string(r.body); !strings.Contains(msg, `"message"`) {
					t.Errorf("GET %s: 400 without a message: %s", bad, msg)
				}
			}
		})
	}
}
