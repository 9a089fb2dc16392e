package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestRunLogOverHTTP: GET .../runs/{id}/log serves a run's lifecycle log in pages, on both
// stores (every answer checked against the OpenAPI document), and refuses a bad cursor or
// limit, another tenant's run and another workflow's path.
func TestRunLogOverHTTP(t *testing.T) {
	t.Parallel()
	for _, kind := range bothStores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			e := setupEnvOn(t, kind, store.Limits{})
			ctx := context.Background()
			const tok, other = "log-tenant-token", "log-other-token"
			if err := e.eng.EnsureToken(ctx, store.DefaultTenant, tok, "test"); err != nil {
				t.Fatal(err)
			}
			if err := e.eng.EnsureToken(ctx, "someone-else", other, "test"); err != nil {
				t.Fatal(err)
			}
			if _, err := e.eng.Deploy(ctx, store.DefaultTenant, testenv.Fixture(t, "examples.wasm"), false); err != nil {
				t.Fatal(err)
			}
			r := call(t, e.srv, "POST", "/v1/workflows/steps/runs?wait=30", tok, []byte(`{"input":{"n":2,"sleepMs":1}}`))
			if r.status != 201 || r.json(t)["status"] != "completed" {
				t.Fatalf("start: %d %s", r.status, r.body)
			}
			logPath := "/v1/workflows/steps/runs/" + r.json(t)["id"].(string) + "/log"

			whole := call(t, e.srv, "GET", logPath, tok, nil)
			if whole.status != 200 {
				t.Fatalf("log: %d %s", whole.status, whole.body)
			}
			entries := whole.json(t)["entries"].([]any)
			var kinds []string
			for _, x := range entries {
				kinds = append(kinds, x.(map[string]any)["kind"].(string))
			}
			got := strings.Join(kinds, " ")
			if !strings.HasPrefix(got, "created ") || !strings.HasSuffix(got, " ended") || !strings.Contains(got, "suspended") {
				t.Fatalf("log kinds %q: want created ... suspended (the sleep) ... ended", got)
			}
			last := entries[len(entries)-1].(map[string]any)
			if last["detail"].(map[string]any)["status"] != "completed" || last["host"] == "" {
				t.Errorf("the ended entry %v: want status completed and the host", last)
			}

			// One entry a page, following nextCursor, gives the same entries.
			var paged []string
			cursor := ""
			for range len(entries) + 1 {
				p := call(t, e.srv, "GET", logPath+"?limit=1"+cursor, tok, nil)
				if p.status != 200 {
					t.Fatalf("page: %d %s", p.status, p.body)
				}
				for _, x := range p.json(t)["entries"].([]any) {
					paged = append(paged, x.(map[string]any)["kind"].(string))
				}
				next, _ := p.json(t)["nextCursor"].(string)
				if next == "" {
					break
				}
				cursor = "&cursor=" + next
			}
			if strings.Join(paged, " ") != got {
				t.Errorf("paged %q, whole %q", paged, got)
			}
			// A follower's cursor: the seq of the last entry it has; none after the last.
			lastSeq := fmt.Sprint(int64(last["seq"].(float64)))
			if p := call(t, e.srv, "GET", logPath+"?cursor="+lastSeq, tok, nil); p.status != 200 || len(p.json(t)["entries"].([]any)) != 0 {
				t.Errorf("after the last entry: %d %s", p.status, p.body)
			}

			for _, q := range []string{"?limit=0", "?limit=1001", "?limit=x", "?limit=%ff", "?cursor=-1", "?cursor=abc",
				"?cursor=%ff%fe", "?cursor=" + strings.Repeat("9", 20), "?cursor=1.5", "?cursor=" + strings.Repeat("1", 5000), "?cursor=1&cursor=2", "?after=1"} {
				if r := call(t, e.srv, "GET", logPath+q, tok, nil); r.status != 400 || r.errorCode(t) != "invalid_request" {
					t.Errorf("log%s: %d %s, want 400", q, r.status, r.body)
				}
			}
			for _, c := range []struct{ path, token string }{
				{logPath, other},
				{strings.Replace(logPath, "/steps/", "/poll/", 1), tok},
				{"/v1/workflows/steps/runs/not-a-uuid/log", tok},
				{"/v1/workflows/steps/runs/%ff%fe/log", tok},
				{"/v1/workflows/steps/runs/00000000-0000-4000-8000-000000000000/log", tok},
			} {
				if r := call(t, e.srv, "GET", c.path, c.token, nil); r.status != 404 {
					t.Errorf("GET %s as %s: %d %s, want 404", c.path, c.token, r.status, r.body)
				}
			}
			if r := call(t, e.srv, "GET", logPath, "", nil); r.status != 401 {
				t.Errorf("no token: %d %s", r.status, r.body)
			}
			if n := e.errorsLogged.Load(); n != 0 {
				t.Errorf("%d errors logged (500s)", n)
			}
		})
	}
}
