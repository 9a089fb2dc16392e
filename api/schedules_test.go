package api_test

import (
	"strings"
	"testing"

	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestSchedulesOverHTTP: a schedule's whole life through the API, on both stores: create, read,
// list, its next fire times, pause, trigger (which starts a run of the tenant's), resume,
// delete. Two tenants may each have a schedule of one id.
func TestSchedulesOverHTTP(t *testing.T) {
	t.Parallel()
	for _, kind := range bothStores {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			e := setupEnvOn(t, kind, store.Limits{})
			a, b := newTenant(t, e, "sched-a", ""), newTenant(t, e, "sched-b", "")
			for _, c := range []tenantClient{a, b} {
				c.mustCall("POST", "/v1/modules", testenv.Fixture(t, "examples.wasm"), 201)
			}
			body := []byte(`{"id":"nightly","cron":"0 30 2 * * *","timeZone":"Europe/Paris","workflow":"steps","input":{"n":1},"overlap":"buffer_one","jitterMs":1000}`)
			sc := a.mustCall("POST", "/v1/schedules", body, 201)
			if sc["id"] != "nightly" || sc["overlap"] != "buffer_one" || sc["paused"] != false || sc["nextFireAt"] == nil || sc["catchupWindowMs"] != float64(60000) {
				t.Fatalf("created: %v", sc)
			}
			if r := a.call("POST", "/v1/schedules", body); r.status != 409 {
				t.Fatalf("the same id again: %d %s", r.status, r.body)
			}
			b.mustCall("POST", "/v1/schedules", []byte(`{"id":"nightly","intervalMs":3600000,"workflow":"steps"}`), 201)

			got := a.mustCall("GET", "/v1/schedules/nightly", nil, 200)
			if got["cron"] != "0 30 2 * * *" || got["timeZone"] != "Europe/Paris" {
				t.Fatalf("read back: %v", got)
			}
			list := a.mustCall("GET", "/v1/schedules", nil, 200)["schedules"].([]any)
			if len(list) != 1 || list[0].(map[string]any)["cron"] != "0 30 2 * * *" {
				t.Fatalf("A's list: %v", list)
			}
			next := a.mustCall("GET", "/v1/schedules/nightly/next?count=3", nil, 200)["fireTimes"].([]any)
			if len(next) != 3 {
				t.Fatalf("next fire times: %v", next)
			}
			for _, ft := range next {
				// 2:30 in Paris is 0:30 or 1:30 UTC.
				at := ft.(map[string]any)["at"].(string)
				if !strings.HasSuffix(at, ":30:00Z") || !(strings.Contains(at, "T00:") || strings.Contains(at, "T01:")) {
					t.Errorf("fire time %s is not 2:30 in Paris", at)
				}
			}
			if p := a.mustCall("POST", "/v1/schedules/nightly/pause", nil, 200); p["paused"] != true {
				t.Fatalf("paused: %v", p)
			}
			trig := a.mustCall("POST", "/v1/schedules/nightly/trigger", nil, 200)
			run, _ := trig["run"].(map[string]any)
			if trig["outcome"] != "started" || run == nil || !strings.HasPrefix(run["idempotencyKey"].(string), "schedule:nightly@") {
				t.Fatalf("trigger: %v", trig)
			}
			a.mustCall("GET", "/v1/workflows/steps/runs/"+run["id"].(string), nil, 200)
			if r := b.call("GET", "/v1/workflows/steps/runs/"+run["id"].(string), nil); r.status != 404 {
				t.Fatalf("B reads A's scheduled run: %d", r.status)
			}
			if p := a.mustCall("POST", "/v1/schedules/nightly/resume", nil, 200); p["paused"] != false || p["lastRunId"] != run["id"] {
				t.Fatalf("resumed: %v", p)
			}
			a.mustCall("DELETE", "/v1/schedules/nightly", nil, 200)
			if r := a.call("GET", "/v1/schedules/nightly", nil); r.status != 404 {
				t.Fatalf("deleted schedule: %d %s", r.status, r.body)
			}
			// B's schedule of the same id is B's, untouched.
			b.mustCall("GET", "/v1/schedules/nightly", nil, 200)
		})
	}
}

// TestScheduleRequestsRefused: malformed, oversized, non-UTF-8 and hostile requests to the
// schedule routes are each a clear 4xx, never a 500.
func TestScheduleRequestsRefused(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{})
	a := newTenant(t, e, "sched-refusals", "")
	a.mustCall("POST", "/v1/modules", testenv.Fixture(t, "examples.wasm"), 201)
	a.mustCall("POST", "/v1/schedules", []byte(`{"id":"ok","intervalMs":60000,"workflow":"steps"}`), 201)
	for _, tc := range []struct {
		method, path string
		body         string
		status       int
		says         string
	}{
		{"POST", "/v1/schedules", `{"id":"x","intervalMs":60000,"workflow":"steps"`, 400, ""},
		{"POST", "/v1/schedules", `{"id":"x","intervalMs":60000,"workflow":"steps","extra":1}`, 400, "extra"},
		{"POST", "/v1/schedules", `{"id":"x","intervalMs":"60000","workflow":"steps"}`, 400, "intervalMs"},
		{"POST", "/v1/schedules", `{"id":"x","intervalMs":1e30,"workflow":"steps"}`, 400, ""},
		{"POST", "/v1/schedules", "{\"id\":\"x\xff\",\"intervalMs\":60000,\"workflow\":\"steps\"}", 400, ""},
		{"POST", "/v1/schedules", `{"id":"x","cron":"* * * * \u0000","workflow":"steps"}`, 400, ""},
		{"POST", "/v1/schedules", `{"id":"../x","intervalMs":60000,"workflow":"steps"}`, 400, "schedule id"},
		{"POST", "/v1/schedules", `{"id":"x","workflow":"steps"}`, 400, "needs a cron"},
		{"POST", "/v1/schedules", `{"id":"x","cron":"every day","workflow":"steps"}`, 400, "cron"},
		{"POST", "/v1/schedules", `{"id":"x","cron":"@daily","timeZone":"Nowhere/Special","workflow":"steps"}`, 400, "IANA"},
		{"POST", "/v1/schedules", `{"id":"x","cron":"@daily","timeZone":"/etc/localtime","workflow":"steps"}`, 400, "IANA"},
		{"POST", "/v1/schedules", `{"id":"x","intervalMs":60000,"workflow":"steps","overlap":"SKIP"}`, 400, "overlap"},
		{"POST", "/v1/schedules", `{"id":"x","intervalMs":60000,"workflow":"steps","jitterMs":-1}`, 400, "jitterMs"},
		{"POST", "/v1/schedules", `{"id":"x","intervalMs":60000,"workflow":"steps","input":"` + strings.Repeat("x", 2<<20) + `"}`, 413, ""},
		{"POST", "/v1/schedules", `{"id":"x","intervalMs":60000,"workflow":"absent"}`, 404, "absent"},
		{"POST", "/v1/schedules", `[]`, 400, ""},
		{"GET", "/v1/schedules/%FF", "", 400, "schedule id"},
		{"GET", "/v1/schedules/" + strings.Repeat("a", 101), "", 400, "schedule id"},
		{"GET", "/v1/schedules/a%00b", "", 400, "schedule id"},
		{"POST", "/v1/schedules/%FF/trigger", "", 400, "schedule id"},
		{"DELETE", "/v1/schedules/missing", "", 404, ""},
		{"POST", "/v1/schedules/missing/pause", "", 404, ""},
		{"POST", "/v1/schedules/missing/resume", "", 404, ""},
		{"POST", "/v1/schedules/missing/trigger", "", 404, ""},
		{"GET", "/v1/schedules/ok/next?count=0", "", 400, "count"},
		{"GET", "/v1/schedules/ok/next?count=101", "", 400, "count"},
		{"GET", "/v1/schedules/ok/next?count=abc", "", 400, "count"},
		{"GET", "/v1/schedules/ok/next?count=1&count=2", "", 400, "count"},
		{"GET", "/v1/schedules/ok/next?limit=2", "", 400, "limit"},
		{"GET", "/v1/schedules?x=1", "", 400, "x"},
		{"PUT", "/v1/schedules/ok", "{}", 405, ""},
	} {
		var body []byte
		if tc.body != "" {
			body = []byte(tc.body)
		}
		r := a.call(tc.method, tc.path, body)
		if r.status != tc.status || !strings.Contains(string(r.body), tc.says) {
			t.Errorf("%s %s %.60q: %d %.300s, want %d saying %q", tc.method, tc.path, tc.body, r.status, r.body, tc.status, tc.says)
		}
	}
	// The schedule the refusals were around is as it was.
	if got := a.mustCall("GET", "/v1/schedules/ok", nil, 200); got["intervalMs"] != float64(60000) {
		t.Fatalf("schedule: %v", got)
	}
	if n := e.errorsLogged.Load(); n != 0 {
		t.Fatalf("%d errors logged", n)
	}
}
