package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// tenantClient calls the API with one tenant's token.
type tenantClient struct {
	t     *testing.T
	e     *env
	id    string
	token string
}

func (c tenantClient) call(method, path string, body []byte) response {
	c.t.Helper()
	return call(c.t, c.e.srv, method, path, c.token, body)
}

func (c tenantClient) mustCall(method, path string, body []byte, status int) map[string]any {
	c.t.Helper()
	r := c.call(method, path, body)
	if r.status != status {
		c.t.Fatalf("%s %s as %s: %d %s, want %d", method, path, c.id, r.status, r.body, status)
	}
	return r.json(c.t)
}

// newTenant creates a tenant through the admin API and returns a client with its first token.
func newTenant(t *testing.T, e *env, id, limits string) tenantClient {
	t.Helper()
	body := fmt.Sprintf(`{"id":%q}`, id)
	if limits != "" {
		body = fmt.Sprintf(`{"id":%q,"limits":%s}`, id, limits)
	}
	r := call(t, e.srv, "POST", "/v1/tenants", adminToken, []byte(body))
	if r.status != 201 {
		t.Fatalf("create tenant %s: %d %s", id, r.status, r.body)
	}
	tok := r.json(t)["token"].(map[string]any)
	secret, _ := tok["secret"].(string)
	if !strings.HasPrefix(secret, "wfh_") {
		t.Fatalf("the first token has no secret: %s", r.body)
	}
	return tenantClient{t: t, e: e, id: id, token: secret}
}

// TestCrossTenantMatrix: tenant B calls every tenant route of the API on tenant A's objects.
// Each route that names one of A's objects is a 404; each list or count B can read shows
// nothing of A; nothing B does changes A's objects. The matrix is keyed by the handler's own
// route table, so a new route without an entry here fails the test.
func TestCrossTenantMatrix(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{})
	a, b := newTenant(t, e, "tenant-a", ""), newTenant(t, e, "tenant-b", "")

	a.mustCall("POST", "/v1/modules", testenv.Fixture(t, "examples.wasm"), 201)
	run := a.mustCall("POST", "/v1/workflows/onboarding/runs", []byte(`{"input":{"email":"a@example.com","delayMs":1,"verifyTimeoutMs":600000}}`), 201)
	runID := run["id"].(string)
	runPath := "/v1/workflows/onboarding/runs/" + runID
	userID := awaitWait(t, a, runPath)
	checked := a.mustCall("POST", "/v1/modules?upgrade=check&replace=true", testenv.Fixture(t, "examples_appended.wasm"), 201)
	upgradeID := checked["upgrade"].(map[string]any)["id"].(string)
	a.mustCall("GET", "/v1/upgrades/"+upgradeID, nil, 200)
	a.mustCall("PUT", "/v1/secrets/stripe-key", []byte(`{"value":"sk_live_a"}`), 200)
	aSecret, _, err := e.st.GetSecret(context.Background(), "tenant-a", "stripe-key")
	if err != nil {
		t.Fatal(err)
	}
	extra := a.mustCall("POST", "/v1/tokens", []byte(`{"name":"ci"}`), 201)
	extraID, extraSecret := extra["id"].(string), extra["secret"].(string)
	aModules := string(a.call("GET", "/v1/modules", nil).body)
	a.mustCall("POST", "/v1/schedules", []byte(`{"id":"sched-of-a","cron":"0 0 3 1 1 *","workflow":"onboarding","input":{"email":"a@example.com"}}`), 201)
	aSchedule := a.mustCall("GET", "/v1/schedules/sched-of-a", nil, 200)
	a.mustCall("PUT", "/v1/hooks/hook-of-a", []byte(`{"workflow":"onboarding","when":["failed"],"start":{"workflow":"onboarding"}}`), 201)
	aHooks := string(a.call("GET", "/v1/hooks", nil).body)

	// notA: the response shows nothing of A's beyond what the request itself named (a 404
	// may repeat the id it was asked for; that tells B nothing).
	var asked string
	notA := func(r response) error {
		for _, leak := range []string{runID, extraID, "tenant-a", "onboarding", userID, "stripe-key", "sk_live_a", "sched-of-a", "hook-of-a"} {
			if strings.Contains(string(r.body), leak) && !strings.Contains(asked, leak) {
				return fmt.Errorf("the response shows tenant A's %q: %s", leak, r.body)
			}
		}
		return nil
	}
	status := func(want int) func(response) error {
		return func(r response) error {
			if r.status != want {
				return fmt.Errorf("status %d, want %d: %s", r.status, want, r.body)
			}
			return notA(r)
		}
	}
	noCount := func(r response) error {
		if r.status != 200 || r.json(t)["total"] != float64(0) {
			return fmt.Errorf("counts: %d %s, want 200 with a total of 0", r.status, r.body)
		}
		return nil
	}
	type probe struct {
		path  string
		body  []byte
		check func(response) error
	}
	hostile := testenv.Fixture(t, "hostile.wasm")
	matrix := map[string]probe{
		"POST /v1/modules":               {"/v1/modules", hostile, status(201)},
		"GET /v1/modules":                {"/v1/modules", nil, status(200)},
		"GET /v1/upgrades/{id}":          {"/v1/upgrades/" + upgradeID, nil, status(404)},
		"GET /v1/workflows":              {"/v1/workflows", nil, status(200)},
		"POST /v1/workflows/{name}/runs": {"/v1/workflows/onboarding/runs", []byte(`{"input":{}}`), status(404)},
		"GET /v1/workflows/{name}/runs":  {"/v1/workflows/onboarding/runs", nil, status(200)},
		"GET /v1/runs":                   {"/v1/runs?input.email=a@example.com", nil, status(200)},
		// B counts none of A's runs, whatever the filter.
		"GET /v1/workflows/{name}/runs/counts":              {"/v1/workflows/onboarding/runs/counts", nil, noCount},
		"GET /v1/runs/counts":                               {"/v1/runs/counts?input.email=a@example.com", nil, noCount},
		"GET /v1/workflows/{name}/runs/{id}":                {runPath, nil, status(404)},
		"DELETE /v1/workflows/{name}/runs/{id}":             {runPath, nil, status(404)},
		"POST /v1/workflows/{name}/runs/{id}/cancel":        {runPath + "/cancel", nil, status(404)},
		"POST /v1/workflows/{name}/runs/{id}/query/{query}": {runPath + "/query/status", nil, status(404)},
		"POST /v1/workflows/{name}/runs/{id}/terminate":     {runPath + "/terminate", nil, status(404)},
		"POST /v1/workflows/{name}/runs/{id}/replay":        {runPath + "/replay", testenv.Fixture(t, "examples.wasm"), status(404)},
		"POST /v1/workflows/{name}/runs/{id}/restart":       {runPath + "/restart", []byte(`{}`), status(404)},
		"POST /v1/workflows/{name}/runs/{id}/fork":          {runPath + "/fork", []byte(`{}`), status(404)},
		"POST /v1/workflows/{name}/runs/{id}/pause":         {runPath + "/pause", nil, status(404)},
		"POST /v1/workflows/{name}/runs/{id}/resume":        {runPath + "/resume", nil, status(404)},
		// B has no workflow of A's name: a pause of it pauses nothing of A's.
		"POST /v1/workflows/{name}/pause":          {"/v1/workflows/onboarding/pause", nil, status(404)},
		"POST /v1/workflows/{name}/resume":         {"/v1/workflows/onboarding/resume", nil, status(404)},
		"GET /v1/workflows/{name}/runs/{id}/steps": {runPath + "/steps", nil, status(404)},
		"POST /v1/workflows/{name}/runs/{id}/signals/{event}": {runPath + "/signals/verify",
			[]byte(`{"userId":"` + userID + `"}`), status(404)},
		"GET /v1/workflows/{name}/runs/{id}/outbound": {runPath + "/outbound", nil, status(404)},
		"GET /v1/workflows/{name}/runs/{id}/log":      {runPath + "/log", nil, status(404)},
		"GET /v1/workflows/{name}/runs/{id}/logs":     {runPath + "/logs", nil, status(404)},
		"GET /v1/workflows/{name}/runs/{id}/export":   {runPath + "/export", nil, status(404)},
		// B has no workflow of A's name: signal-with-start finds no run and starts none.
		"POST /v1/workflows/{name}/signal-with-start": {"/v1/workflows/onboarding/signal-with-start",
			[]byte(`{"idempotencyKey":"k","event":"verify","payload":{"userId":"` + userID + `"}}`), status(404)},
		// B's broadcast of the exact event A's run waits for resolves nothing of A's.
		"POST /v1/events/{event}": {"/v1/events/verify", []byte(`{"userId":"` + userID + `"}`), func(r response) error {
			if r.status != 202 || r.json(t)["resolved"] != float64(0) {
				return fmt.Errorf("broadcast: %d %s, want 202 resolving 0", r.status, r.body)
			}
			return nil
		}},
		"GET /v1/tenant": {"/v1/tenant", nil, func(r response) error {
			if r.status != 200 || r.json(t)["id"] != "tenant-b" {
				return fmt.Errorf("own tenant: %d %s", r.status, r.body)
			}
			return notA(r)
		}},
		"GET /v1/tokens":            {"/v1/tokens", nil, status(200)},
		"POST /v1/tokens":           {"/v1/tokens", []byte(`{}`), status(201)},
		"DELETE /v1/tokens/{token}": {"/v1/tokens/" + extraID, nil, status(404)},
		"GET /v1/secrets":           {"/v1/secrets", nil, status(200)},
		// B writing a secret of the same name writes its own; A's value stays (checked below).
		"PUT /v1/secrets/{secret}":    {"/v1/secrets/stripe-key", []byte(`{"value":"sk_live_b"}`), status(200)},
		"DELETE /v1/secrets/{secret}": {"/v1/secrets/stripe-key", nil, status(200)},
		// B has no workflow of A's: a schedule of it is a 404; A's schedule is not B's to see.
		"POST /v1/schedules":              {"/v1/schedules", []byte(`{"id":"b-sched","intervalMs":60000,"workflow":"nope"}`), status(404)},
		"GET /v1/schedules":               {"/v1/schedules", nil, status(200)},
		"GET /v1/schedules/{id}":          {"/v1/schedules/sched-of-a", nil, status(404)},
		"DELETE /v1/schedules/{id}":       {"/v1/schedules/sched-of-a", nil, status(404)},
		"POST /v1/schedules/{id}/pause":   {"/v1/schedules/sched-of-a/pause", nil, status(404)},
		"POST /v1/schedules/{id}/resume":  {"/v1/schedules/sched-of-a/resume", nil, status(404)},
		"POST /v1/schedules/{id}/trigger": {"/v1/schedules/sched-of-a/trigger", nil, status(404)},
		"GET /v1/schedules/{id}/next":     {"/v1/schedules/sched-of-a/next", nil, status(404)},
		// B's hooks and deliveries are its own: A's hook is not B's to see or delete, B's
		// rotation makes B's secret, and A's run has no delivery B can list.
		"GET /v1/hooks":                 {"/v1/hooks", nil, status(200)},
		"PUT /v1/hooks/{id}":            {"/v1/hooks/b-hook", []byte(`{"when":["failed"],"start":{"workflow":"echo"}}`), status(201)},
		"DELETE /v1/hooks/{id}":         {"/v1/hooks/hook-of-a", nil, status(404)},
		"POST /v1/hooks/signing-secret": {"/v1/hooks/signing-secret", nil, status(200)},
		"GET /v1/hooks/deliveries": {"/v1/hooks/deliveries?runId=" + runID, nil, func(r response) error {
			if r.status != 200 || len(r.json(t)["deliveries"].([]any)) != 0 {
				return fmt.Errorf("deliveries: %d %s, want 200 with none", r.status, r.body)
			}
			return nil
		}},
	}
	tenantRoutes := 0
	for _, pattern := range e.handler.Routes() {
		method, path, _ := strings.Cut(pattern, " ")
		if strings.HasPrefix(path, "/v1/tenants") {
			// Admin routes: a tenant's token is refused outright.
			if r := b.call(method, strings.NewReplacer("{tenant}", "tenant-a", "{token}", extraID, "{secret}", "stripe-key").Replace(path), []byte(`{}`)); r.status != 401 {
				t.Errorf("%s with a tenant token: %d %s, want 401", pattern, r.status, r.body)
			}
			continue
		}
		tenantRoutes++
		p, ok := matrix[pattern]
		if !ok {
			t.Errorf("route %s has no entry in the cross-tenant matrix", pattern)
			continue
		}
		asked = p.path
		if err := p.check(b.call(method, p.path, p.body)); err != nil {
			t.Errorf("%s: %v", pattern, err)
		}
	}
	if tenantRoutes != len(matrix) {
		t.Errorf("the matrix has %d entries for %d tenant routes", len(matrix), tenantRoutes)
	}

	// Everything of A's is as it was.
	got := a.mustCall("GET", runPath, nil, 200)
	if got["status"] != "running" {
		t.Fatalf("A's run is %v after B's calls", got["status"])
	}
	steps := a.mustCall("GET", runPath+"/steps", nil, 200)["steps"].([]any)
	if wait := steps[len(steps)-1].(map[string]any); wait["status"] != "waiting" {
		t.Fatalf("A's wait is %v after B's broadcast", wait["status"])
	}
	if r := call(t, e.srv, "GET", "/v1/workflows", extraSecret, nil); r.status != 200 {
		t.Fatalf("A's second token stopped working: %d %s", r.status, r.body)
	}
	// The stored value is sealed: A's row holds the very bytes it held before B's calls.
	if v, ok, err := e.st.GetSecret(context.Background(), "tenant-a", "stripe-key"); err != nil || !ok ||
		v.KeyID != aSecret.KeyID || !bytes.Equal(v.DataKey, aSecret.DataKey) || !bytes.Equal(v.Ciphertext, aSecret.Ciphertext) {
		t.Fatalf("A's secret after B's calls: %+v %v %v, was %+v", v, ok, err, aSecret)
	}
	if now := a.mustCall("GET", "/v1/schedules/sched-of-a", nil, 200); fmt.Sprint(now) != fmt.Sprint(aSchedule) {
		t.Fatalf("A's schedule changed: %v, was %v", now, aSchedule)
	}
	if now := string(a.call("GET", "/v1/hooks", nil).body); now != aHooks {
		t.Fatalf("A's hooks changed: %s, were %s", now, aHooks)
	}
	if now := string(a.call("GET", "/v1/modules", nil).body); now != aModules {
		t.Fatalf("A's modules changed: %s, were %s", now, aModules)
	}
	wfs := string(a.call("GET", "/v1/workflows", nil).body)
	if strings.Contains(wfs, "echo") || !strings.Contains(wfs, `"running":1`) {
		t.Fatalf("A's workflow list shows B's module or lost its run: %s", wfs)
	}
	t.Logf("cross-tenant matrix: %d tenant routes probed by B on A's objects, %d admin routes refused to a tenant token",
		tenantRoutes, len(e.handler.Routes())-tenantRoutes)
}

// awaitWait waits until the onboarding run waits for verification and returns its user id.
func awaitWait(t *testing.T, c tenantClient, runPath string) string {
	t.Helper()
	var userID string
	testenv.Await(t, 30*time.Second, func() error {
		steps := c.mustCall("GET", runPath+"/steps", nil, 200)["steps"].([]any)
		if len(steps) != 4 || steps[3].(map[string]any)["status"] != "waiting" {
			return fmt.Errorf("the run has not reached its wait: %v", c.mustCall("GET", runPath, nil, 200))
		}
		userID = steps[0].(map[string]any)["output"].(map[string]any)["id"].(string)
		return nil
	})
	return userID
}

// TestEveryRouteNeedsItsToken: no token, a malformed header, an unknown token, a revoked
// token, and the wrong kind of token are each a 401 on every route.
func TestEveryRouteNeedsItsToken(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{})
	a := newTenant(t, e, "acme", "")
	tok := a.mustCall("POST", "/v1/tokens", []byte(`{"name":"soon revoked"}`), 201)
	a.mustCall("DELETE", "/v1/tokens/"+tok["id"].(string), nil, 200)
	revoked := tok["secret"].(string)

	headers := map[string]string{
		"none": "", "not bearer": "Basic YWJjOmRlZg==", "empty bearer": "Bearer ", "unknown": "Bearer wfh_unknown",
		"revoked": "Bearer " + revoked,
	}
	checked := 0
	for _, pattern := range e.handler.Routes() {
		method, path, _ := strings.Cut(pattern, " ")
		path = strings.NewReplacer("{name}", "steps", "{id}", "00000000-0000-0000-0000-000000000000", "{event}", "e",
			"{token}", "tok_x", "{tenant}", "acme", "{secret}", "s").Replace(path)
		wrong := "Bearer " + adminToken
		if strings.HasPrefix(path, "/v1/tenants") {
			wrong = "Bearer " + a.token
		}
		for name, h := range mapWith(headers, "wrong kind", wrong) {
			req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(`{}`))
			if h != "" {
				req.Header.Set("Authorization", h)
			}
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body wire.ErrorBody
			_ = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if resp.StatusCode != 401 || body.Error.Code != "unauthorized" || body.Error.Message == "" {
				t.Errorf("%s with %s token: %d %+v, want 401 unauthorized", pattern, name, resp.StatusCode, body)
			}
			checked++
		}
	}
	t.Logf("%d unauthenticated calls, all 401", checked)
}

func mapWith(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}

// TestAdminManagesTenants: creating, reading, limiting and token management, with the errors
// of each.
func TestAdminManagesTenants(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{})
	admin := tenantClient{t: t, e: e, id: "admin", token: adminToken}
	a := newTenant(t, e, "globex", `{"concurrency":5,"maxInputBytes":2048}`)

	for _, c := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"id":"globex"}`, 409, "conflict"},
		{`{"id":"Has Spaces"}`, 400, "invalid_request"},
		{`{"id":""}`, 400, "invalid_request"},
		{`{"id":"ok","limits":{"memoryPages":-1}}`, 400, "invalid_request"},
		{`{"id":"ok","limits":{"memoryPages":70000}}`, 400, "invalid_request"},
		{`{"id":"ok","limits":{"nope":1}}`, 400, "invalid_json"},
		{`{"id":`, 400, "invalid_json"},
	} {
		if r := admin.call("POST", "/v1/tenants", []byte(c.body)); r.status != c.status || r.errorCode(t) != c.code {
			t.Errorf("create %s: %d %s, want %d %s", c.body, r.status, r.body, c.status, c.code)
		}
	}
	got := admin.mustCall("GET", "/v1/tenants/globex", nil, 200)
	eff := got["effectiveLimits"].(map[string]any)
	if eff["concurrency"] != float64(5) || eff["maxInputBytes"] != float64(2048) || eff["maxEventBytes"] != float64(256<<10) {
		t.Fatalf("effective limits %v", eff)
	}
	if r := admin.call("GET", "/v1/tenants/nobody", nil); r.status != 404 {
		t.Fatalf("unknown tenant: %d %s", r.status, r.body)
	}
	admin.mustCall("PATCH", "/v1/tenants/globex", []byte(`{"limits":{"maxInputBytes":10}}`), 200)
	if r := a.call("POST", "/v1/modules", testenv.Fixture(t, "examples.wasm")); r.status != 201 {
		t.Fatalf("deploy: %d %s", r.status, r.body)
	}
	if r := a.call("POST", "/v1/workflows/steps/runs", []byte(`{"input":{"n":1,"pad":"xxxxxxxx"}}`)); r.status != 413 || !strings.Contains(string(r.body), "limit is 10") {
		t.Fatalf("input over the new limit: %d %s", r.status, r.body)
	}
	if r := admin.call("PATCH", "/v1/tenants/globex", []byte(`{}`)); r.status != 400 {
		t.Fatalf("patch without limits: %d %s", r.status, r.body)
	}
	tenants := string(admin.call("GET", "/v1/tenants", nil).body)
	if !strings.Contains(tenants, `"globex"`) {
		t.Fatalf("tenant list: %s", tenants)
	}

	tok := admin.mustCall("POST", "/v1/tenants/globex/tokens", []byte(`{"name":"deploy bot"}`), 201)
	bot := tenantClient{t: t, e: e, id: "globex", token: tok["secret"].(string)}
	bot.mustCall("GET", "/v1/workflows", nil, 200)
	list := admin.mustCall("GET", "/v1/tenants/globex/tokens", nil, 200)["tokens"].([]any)
	if len(list) != 2 || strings.Contains(fmt.Sprint(list), "wfh_") {
		t.Fatalf("token list (two tokens, no secrets): %v", list)
	}
	admin.mustCall("DELETE", "/v1/tenants/globex/tokens/"+tok["id"].(string), nil, 200)
	if r := bot.call("GET", "/v1/workflows", nil); r.status != 401 {
		t.Fatalf("revoked token: %d %s", r.status, r.body)
	}
	if r := admin.call("DELETE", "/v1/tenants/globex/tokens/tok_nonexistent", nil); r.status != 404 {
		t.Fatalf("revoke an unknown token: %d %s", r.status, r.body)
	}
}

// TestListFiltersRetentionAndTriggers: run listing by input, time and status over HTTP, the
// retention ceiling, and an event that starts runs, idempotently.
func TestListFiltersRetentionAndTriggers(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, store.Limits{})
	a := newTenant(t, e, "initech", "")
	a.mustCall("POST", "/v1/modules", testenv.Fixture(t, "examples.wasm"), 201)

	long := a.mustCall("POST", "/v1/workflows/steps/runs", []byte(`{"input":{"n":1,"tag":"x"},"retentionDays":100000}`), 201)
	if long["retentionDays"] != float64(90) {
		t.Fatalf("retention %v, want the ceiling of 90", long["retentionDays"])
	}
	mid := time.Now().UTC().Format(time.RFC3339Nano)
	// A real pause: the runs' creation times are Postgres's clock (store/postgres), which no
	// test can move, and the second run must be created after mid.
	time.Sleep(5 * time.Millisecond)
	other := a.mustCall("POST", "/v1/workflows/steps/runs", []byte(`{"input":{"n":2,"tag":"y","nested":{"k":true}}}`), 201)

	ids := func(query string) []string {
		t.Helper()
		var out []string
		for _, r := range a.mustCall("GET", "/v1/runs?"+query, nil, 200)["runs"].([]any) {
			out = append(out, r.(map[string]any)["id"].(string))
		}
		return out
	}
	cases := map[string][]string{
		"input.tag=x":                {long["id"].(string)},
		"input.n=2":                  {other["id"].(string)},
		"input.nested.k=true":        {other["id"].(string)},
		"input.tag=%22y%22":          {other["id"].(string)},
		"input.tag=z":                nil,
		"since=" + mid:               {other["id"].(string)},
		"until=" + mid:               {long["id"].(string)},
		"input.tag=x&since=" + mid:   nil,
		"status=cancelled":           nil,
		"limit=1&input.tag=y":        {other["id"].(string)},
		"input.tag=x&input.n=1":      {long["id"].(string)},
		"input.n=1&input.nested.k=1": nil,
	}
	for q, want := range cases {
		if got := ids(q); !slices.Equal(got, want) {
			t.Errorf("?%s: %v, want %v", q, got, want)
		}
	}
	for _, bad := range []string{"since=yesterday", "until=2026-13-01", "input.=1", "input.a..b=1", "limit=501"} {
		if r := a.call("GET", "/v1/runs?"+bad, nil); r.status != 400 {
			t.Errorf("?%s: %d %s, want 400", bad, r.status, r.body)
		}
	}

	// onboarding declares user.signed_up as a trigger: the event starts one run, once.
	send := func() response {
		req, _ := http.NewRequest("POST", e.srv.URL+"/v1/events/user.signed_up", strings.NewReader(`{"email":"new@example.com","delayMs":1,"verifyTimeoutMs":1}`))
		req.Header.Set("Authorization", "Bearer "+a.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "signup-42")
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		b, _ := json.Marshal(body)
		return response{resp.StatusCode, b}
	}
	first := send()
	started := first.json(t)["started"].([]any)
	if first.status != 202 || len(started) != 1 || started[0].(map[string]any)["workflow"] != "onboarding" {
		t.Fatalf("trigger: %d %s", first.status, first.body)
	}
	again := send()
	if again.status != 200 || again.json(t)["duplicate"] != true || !strings.Contains(string(again.body), started[0].(map[string]any)["id"].(string)) {
		t.Fatalf("repeated event: %d %s", again.status, again.body)
	}
	if n := len(a.mustCall("GET", "/v1/workflows/onboarding/runs", nil, 200)["runs"].([]any)); n != 1 {
		t.Fatalf("%d onboarding runs, want 1", n)
	}
	run := a.mustCall("GET", "/v1/workflows/onboarding/runs/"+started[0].(map[string]any)["id"].(string), nil, 200)
	if trig, _ := run["triggeredBy"].(map[string]any); trig["kind"] != "event" || trig["event"] != "user.signed_up" || trig["eventId"] != "signup-42" {
		t.Fatalf("the triggered run's triggeredBy: %v", run["triggeredBy"])
	}
}
