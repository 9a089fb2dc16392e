package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/postgres"
)

// The client commands are tested against the real API over a real engine and Postgres, as
// api's own tests serve it, so a drift between the CLI's idea of a route or a response shape
// and the server's fails here. None of these tests is parallel: urfave/cli keeps package-level
// state, and they set WFHOST_* variables.

const testAdminToken = "cli-test-admin-token"

// serve starts the API with an admin token on a schema of the test's own, and returns its URL.
func serve(t *testing.T) string {
	t.Helper()
	return serveWith(t, func(*api.Config) {})
}

// serveWith is serve with the API's configuration changed by configure.
func serveWith(t *testing.T, configure func(*api.Config)) string {
	t.Helper()
	ctx := context.Background()
	rt := testenv.Runtime(t)
	schema := testenv.Schema(t, "wfhost_cli")
	st, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: schema, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Store: st, Runtime: rt, LeaseFor: 3 * time.Second, PollInterval: time.Second,
		TenantDefaults: store.Limits{ActivationTimeoutMs: 5000}, MaxRetentionDays: 90, SecretKeys: testenv.SecretKeys(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := api.Config{Service: eng.Service, Store: st, AdminToken: testAdminToken,
		Ready: func(ctx context.Context) error { return st.Ping(ctx) }}
	configure(&cfg)
	srv := httptest.NewServer(api.New(cfg))
	t.Cleanup(func() {
		srv.Close()
		eng.Stop()
		st.Close()
	})
	return srv.URL
}

// cleanEnv clears the WFHOST_* variables of the environment the tests run in, restoring them
// afterwards, and points the token file at an empty directory: only what a test sets counts.
func cleanEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "WFHOST_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Setenv("WFHOST_DATA_DIR", t.TempDir())
	// One compile cache for the package's tests, as internal/testenv keeps one for the
	// others: under -race a Go fixture's compile takes tens of seconds, and each test's data
	// directory would otherwise compile the same fixtures again.
	t.Setenv("WFHOST_CACHE_DIR", filepath.Join(os.TempDir(), "wfhost-test-compile-cache"))
}

// wfhost runs the CLI as main does, flags allowed after arguments, and returns what it printed.
func wfhost(args ...string) (string, error) {
	var stdout bytes.Buffer
	app := newApp()
	app.Writer = &stdout
	err := app.Run(flagsFirst(app, append([]string{"wfhost"}, args...)))
	return stdout.String(), err
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := wfhost(args...)
	if err != nil {
		t.Fatalf("wfhost %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// runJSON runs a command with --json and decodes what it printed.
func runJSON[T any](t *testing.T, args ...string) T {
	t.Helper()
	out := mustRun(t, append(args, "--json")...)
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("wfhost %s --json printed no JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
	return v
}

// mustFail runs a command that must fail and returns its error text.
func mustFail(t *testing.T, args ...string) string {
	t.Helper()
	out, err := wfhost(args...)
	if err == nil {
		t.Fatalf("wfhost %s succeeded:\n%s", strings.Join(args, " "), out)
	}
	return err.Error()
}

// matches fails the test unless text matches every pattern (regular expressions, so table
// columns can be matched with \s+ whatever their width).
func matches(t *testing.T, what, text string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(text) {
			t.Fatalf("%s: no match for %q in:\n%s", what, p, text)
		}
	}
}

func ids(runs []wire.Run) map[string]bool {
	m := map[string]bool{}
	for _, r := range runs {
		m[r.ID] = true
	}
	return m
}

// awaitVerify waits until an onboarding run waits for its verify event.
func awaitVerify(t *testing.T, id string) {
	t.Helper()
	testenv.Await(t, 30*time.Second, func() error {
		s := runJSON[wire.StepPage](t, "runs", "steps", "onboarding", id)
		if len(s.Steps) != 4 || s.Steps[3].Status != wire.StepWaiting {
			return fmt.Errorf("run %s does not wait for verify: %d steps", id, len(s.Steps))
		}
		return nil
	})
}

// awaitCompleted waits until a run has completed.
func awaitCompleted(t *testing.T, workflow, id string) {
	t.Helper()
	testenv.Await(t, 30*time.Second, func() error {
		if r := runJSON[wire.Run](t, "runs", "get", workflow, id); r.Status != wire.RunCompleted {
			return fmt.Errorf("run %s is %s, want completed", id, r.Status)
		}
		return nil
	})
}

// onboardingUser is the user id the onboarding example derives from an email.
func onboardingUser(email string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(email)))
	return "u-" + hex.EncodeToString(sum[:6])
}

func TestClientCommandsAgainstTheAPI(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	admin := []string{"--admin-token", testAdminToken}

	// Tenants, with the admin token.
	out := mustRun(t, append([]string{"tenants", "create", "acme", "--limits", `{"concurrency": 5}`}, admin...)...)
	matches(t, "tenants create", out, `tenant\s+acme`, `concurrency\s+5\s+tenant`, `activationTimeoutMs\s+5000\s+default`, `shown once`)
	secret := regexp.MustCompile(`secret\s+(wfh_\S+)`).FindStringSubmatch(out)
	if secret == nil {
		t.Fatalf("tenants create printed no secret:\n%s", out)
	}
	tenantToken := secret[1]
	matches(t, "tenants list", mustRun(t, append([]string{"tenants", "list"}, admin...)...), `(?m)^ID\s+CREATED\s+LIMITS$`, `acme\s+\S+\s+concurrency=5`)
	out = mustRun(t, append([]string{"tenants", "set-limits", "acme", "--limits", `{"concurrency":7,"memoryPages":300}`}, admin...)...)
	matches(t, "tenants set-limits", out, `concurrency\s+7\s+tenant`, `memoryPages\s+300\s+tenant`)
	t.Setenv("WFHOST_ADMIN_TOKEN", testAdminToken) // the environment variable works as the flag
	got := runJSON[wire.Tenant](t, "tenants", "get", "acme")
	if got.ID != "acme" || got.Limits.Concurrency != 7 || got.EffectiveLimits == nil || got.EffectiveLimits.ActivationTimeoutMs != 5000 {
		t.Fatalf("tenants get --json: %+v", got)
	}
	matches(t, "tenants get (own)", mustRun(t, "tenants", "get", "--token", tenantToken), `tenant\s+acme`, `memoryPages\s+300\s+tenant`)
	matches(t, "tenant token on an admin route", mustFail(t, "tenants", "list", "--admin-token", tenantToken), `unauthorized \(HTTP 401\)`)
	matches(t, "duplicate tenant", mustFail(t, "tenants", "create", "acme"), `conflict \(HTTP 409\)`)

	// Modules and runs, with the tenant's token.
	out = mustRun(t, "deploy", filepath.Join(testenv.Root(), "testdata", "examples.wasm"), "--token", tenantToken)
	matches(t, "deploy", out, `module [0-9a-f]{64} \(\d`, `onboarding\s+1\s+user.signed_up`, `order-saga\s+1\s+-`, `poll\s+1`, `steps\s+1`)
	t.Setenv("WFHOST_TOKEN", tenantToken)
	mods := runJSON[wire.ModulePage](t, "modules", "list")
	if len(mods.Modules) != 1 {
		t.Fatalf("modules list --json: %+v", mods)
	}
	matches(t, "modules list", mustRun(t, "modules", "list"), `(?m)^DIGEST\s+SIZE\s+ABI\s+DEPLOYED$`, regexp.QuoteMeta(mods.Modules[0].Digest)+`\s+\d`)

	out = mustRun(t, "start", "steps", "--input", `{"n": 3}`, "--wait")
	matches(t, "start --wait", out, `status\s+completed`, `output\s+\{"sum":3\}`, `input\s+\{"n":3\}`)
	steps3 := regexp.MustCompile(`run\s+(\S+)`).FindStringSubmatch(out)[1]
	steps2 := runJSON[wire.Run](t, "start", "steps", "--wait", "--input", `{"n":2}`, "--idempotency-key", "k1", "--retention-days", "3")
	if steps2.Status != wire.RunCompleted || compactJSON(steps2.Output) != `{"sum":1}` || steps2.IdempotencyKey != "k1" || steps2.RetentionDays != 3 {
		t.Fatalf("start --json --wait: %+v", steps2)
	}
	if again := runJSON[wire.Run](t, "start", "steps", "--input", `{"n":2}`, "--idempotency-key", "k1"); again.ID != steps2.ID {
		t.Fatalf("a start with the same idempotency key started run %s, not %s", again.ID, steps2.ID)
	}
	matches(t, "steps", mustRun(t, "runs", "steps", "steps", steps3), `(?m)^SEQ\s+KEY\s+KIND\s+STATUS\s+ATTEMPT\s+MS\s+RESULT$`, `0\s+s\s+run\s+completed\s+1\s+[\d.]+\s+0`, `2\s+s#2\s+run\s+completed`)

	// --wait fails the command when the run fails, and when it has not ended in time.
	var failed bytes.Buffer
	app := newApp()
	app.Writer = &failed
	err := app.Run(flagsFirst(app, []string{"wfhost", "start", "order-saga", "--input", `{"orderId":"o1","amount":5,"failPayment":true}`, "--wait"}))
	if err == nil || !strings.Contains(err.Error(), "ended failed: card_declined") {
		t.Fatalf("start --wait of a failing run: %v", err)
	}
	matches(t, "failed run", failed.String(), `status\s+failed`, `error\s+card_declined: .*card declined for 5`)
	sagaID := regexp.MustCompile(`run\s+(\S+)`).FindStringSubmatch(failed.String())[1]
	notYet := mustFail(t, "start", "onboarding", "--input", `{"email":"late@example.com","delayMs":1,"verifyTimeoutMs":600000}`, "--wait", "--timeout", "300ms")
	matches(t, "start --wait --timeout", notYet, `is still (pending|running) after 300ms|had not ended after 300ms`)
	lateID := regexp.MustCompile(`run (\S+) `).FindStringSubmatch(notYet)[1]

	// A run waiting for a signal.
	onboarding := runJSON[wire.Run](t, "start", "onboarding", "--input", `{"email":"ada@example.com","delayMs":1,"verifyTimeoutMs":600000}`)
	awaitVerify(t, onboarding.ID)
	matches(t, "steps of a waiting run", mustRun(t, "runs", "steps", "onboarding", onboarding.ID), `create-user\s+run\s+completed`, `await-verify\s+wait\s+waiting\s+-\s+-\s+waiting for verify`)
	payload := `{"userId":"` + onboardingUser("ada@example.com") + `","via":"cli"}`
	matches(t, "signal", mustRun(t, "signal", "onboarding", onboarding.ID, "verify", "--payload", payload), `event verify delivered to run `+onboarding.ID)
	awaitCompleted(t, "onboarding", onboarding.ID) // the signalled run
	matches(t, "runs get", mustRun(t, "runs", "get", "onboarding", onboarding.ID), `status\s+completed`, `verified via cli`, `retention\s+30 days`)
	matches(t, "runs get, wrong workflow", mustFail(t, "runs", "get", "poll", onboarding.ID), `not_found \(HTTP 404\)`)

	// Terminate: the hard stop.
	matches(t, "runs terminate", mustRun(t, "runs", "terminate", "onboarding", lateID), `status\s+cancelled`)
	matches(t, "terminate twice", mustFail(t, "runs", "terminate", "onboarding", lateID), `conflict \(HTTP 409\)`)
	matches(t, "cancel after terminate", mustFail(t, "runs", "cancel", "onboarding", lateID), `conflict \(HTTP 409\)`)

	// Broadcasts: a trigger starts a run, an id makes a resend a no-op, a waiting run resolves.
	signup := `{"email":"grace@example.com","delayMs":1,"verifyTimeoutMs":600000}`
	out = mustRun(t, "events", "send", "user.signed_up", "--payload", signup, "--id", "e1")
	matches(t, "events send", out, `event\s+user.signed_up`, `event id\s+e1`, `duplicate\s+no`, `resolved\s+0 waiting`, `started\s+1 run`, `\S+ onboarding@1`)
	triggered := regexp.MustCompile(`(\S+) onboarding@1`).FindStringSubmatch(out)[1]
	matches(t, "events send again", mustRun(t, "events", "send", "user.signed_up", "--payload", signup, "--id", "e1"), `duplicate\s+yes`)
	dup := runJSON[wire.BroadcastResult](t, "events", "send", "user.signed_up", "--payload", signup, "--id", "e1")
	if !dup.Duplicate || dup.EventID != "e1" {
		t.Fatalf("events send --json of a duplicate: %+v", dup)
	}
	awaitVerify(t, triggered)
	verify := `{"userId":"` + onboardingUser("grace@example.com") + `","via":"broadcast"}`
	matches(t, "events send to a waiting run", mustRun(t, "events", "send", "verify", "--payload", verify), `resolved\s+1 waiting`, `started\s+0 run`)
	awaitCompleted(t, "onboarding", triggered)

	// Listings and their filters.
	all := runJSON[wire.RunPage](t, "runs", "list")
	if len(all.Runs) != 6 || all.NextCursor != "" {
		t.Fatalf("runs list --json: %d runs, cursor %q", len(all.Runs), all.NextCursor)
	}
	out = mustRun(t, "runs", "list", "--workflow", "steps")
	matches(t, "runs list --workflow", out, `(?m)^ID\s+WORKFLOW\s+VERSION\s+STATUS\s+CREATED\s+DURATION$`, steps3+`\s+steps\s+1\s+completed`, steps2.ID)
	if strings.Contains(out, onboarding.ID) {
		t.Fatalf("runs list --workflow steps lists an onboarding run:\n%s", out)
	}
	if r := runJSON[wire.RunPage](t, "runs", "list", "steps", "--input", "n=3"); len(r.Runs) != 1 || r.Runs[0].ID != steps3 {
		t.Fatalf("runs list --input n=3: %+v", r.Runs)
	}
	if r := runJSON[wire.RunPage](t, "runs", "list", "--input", "email=ada@example.com", "--input", "delayMs=1"); len(r.Runs) != 1 || r.Runs[0].ID != onboarding.ID {
		t.Fatalf("runs list with two --input filters: %+v", r.Runs)
	}
	if r := runJSON[wire.RunPage](t, "runs", "list", "--status", "failed"); len(r.Runs) != 1 || r.Runs[0].ID != sagaID {
		t.Fatalf("runs list --status failed: %+v", r.Runs)
	}
	if r := runJSON[wire.RunPage](t, "runs", "list", "--status", "cancelled", "--workflow", "onboarding"); len(r.Runs) != 1 || r.Runs[0].ID != lateID {
		t.Fatalf("runs list --status cancelled: %+v", r.Runs)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if r := runJSON[wire.RunPage](t, "runs", "list", "--since", "1h", "--until", future); len(r.Runs) != 6 {
		t.Fatalf("runs list --since 1h --until %s: %d runs", future, len(r.Runs))
	}
	if r := runJSON[wire.RunPage](t, "runs", "list", "--since", future); len(r.Runs) != 0 {
		t.Fatalf("runs list --since %s: %d runs", future, len(r.Runs))
	}
	if r := runJSON[wire.RunPage](t, "runs", "list", "--version", "1"); len(r.Runs) != 6 {
		t.Fatalf("runs list --version 1: %d runs", len(r.Runs))
	}
	if r := runJSON[wire.RunPage](t, "runs", "list", "--version", "9"); len(r.Runs) != 0 {
		t.Fatalf("runs list --version 9: %d runs", len(r.Runs))
	}
	if r := runJSON[wire.RunPage](t, "runs", "list", "--idempotency-key", "no-such-key"); len(r.Runs) != 0 {
		t.Fatalf("runs list --idempotency-key no-such-key: %d runs", len(r.Runs))
	}
	out = mustRun(t, "runs", "list", "--limit", "2")
	matches(t, "runs list --limit", out, `more: --cursor \S+ \(or --all\)`)
	page := runJSON[wire.RunPage](t, "runs", "list", "--limit", "2")
	next := runJSON[wire.RunPage](t, "runs", "list", "--limit", "2", "--cursor", page.NextCursor)
	if len(page.Runs) != 2 || len(next.Runs) != 2 || ids(page.Runs)[next.Runs[0].ID] {
		t.Fatalf("pages: %+v then %+v", page, next)
	}
	paged := runJSON[wire.RunPage](t, "runs", "list", "--limit", "2", "--all")
	if len(paged.Runs) != 6 || paged.NextCursor != "" || len(ids(paged.Runs)) != 6 {
		t.Fatalf("runs list --all: %d runs (%d distinct), cursor %q", len(paged.Runs), len(ids(paged.Runs)), paged.NextCursor)
	}
	// The joined pages keep every field the server sent, not only those the tables show.
	if out := mustRun(t, "runs", "list", "--limit", "4", "--all", "--json"); strings.Count(out, `"updatedAt"`) != 6 {
		t.Fatalf("runs list --all --json dropped fields:\n%s", out)
	}
	out = mustRun(t, "runs", "list", "--limit", "1", "--all")
	if strings.Count(out, "\n") != 7 || strings.Contains(out, "more:") {
		t.Fatalf("runs list --all as a table:\n%s", out)
	}

	out = mustRun(t, "workflows", "list")
	matches(t, "workflows list", out, `(?m)^NAME\s+LATEST\s+VERSIONS\s+RUNS\s+BY STATUS\s+PAUSED$`,
		`steps\s+1\s+1\s+2\s+completed=2`, `onboarding\s+1\s+1\s+3\s+completed=2 cancelled=1`, `order-saga\s+1\s+1\s+1\s+failed=1`, `poll\s+1\s+1\s+0\s+-`)
	wfs := runJSON[wire.WorkflowPage](t, "workflows", "list")
	if len(wfs.Workflows) != 12 { // the examples: charge-or-pause, parent, child, parallel and digest included
		t.Fatalf("workflows list --json: %+v", wfs)
	}

	// Tokens: a tenant's own, then any tenant's with the admin token; a revoked one is refused.
	out = mustRun(t, "tokens", "create", "--name", "ci")
	matches(t, "tokens create", out, `token\s+tok_\S+`, `tenant\s+acme`, `name\s+ci`, `secret\s+wfh_\S+`, `shown once`)
	ciID := regexp.MustCompile(`token\s+(\S+)`).FindStringSubmatch(out)[1]
	ciSecret := regexp.MustCompile(`secret\s+(\S+)`).FindStringSubmatch(out)[1]
	mustRun(t, "workflows", "list", "--token", ciSecret)
	matches(t, "tokens list", mustRun(t, "tokens", "list"), `(?m)^ID\s+NAME\s+CREATED\s+REVOKED$`, ciID+`\s+ci\s+\S+\s+-`)
	matches(t, "tokens revoke", mustRun(t, "tokens", "revoke", ciID), `token `+ciID+` of tenant acme revoked at \S+`)
	matches(t, "a revoked token", mustFail(t, "workflows", "list", "--token", ciSecret), `unauthorized \(HTTP 401\): the bearer token is unknown or revoked`)
	matches(t, "tokens list after revoke", mustRun(t, "tokens", "list"), ciID+`\s+ci\s+\S+\s+\d{4}-`)

	ops := runJSON[wire.Token](t, "tokens", "create", "--tenant", "acme", "--name", "ops")
	if ops.Tenant != "acme" || ops.Name != "ops" || !strings.HasPrefix(ops.Secret, "wfh_") {
		t.Fatalf("tokens create --tenant --json: %+v", ops)
	}
	matches(t, "tokens list --tenant", mustRun(t, "tokens", "list", "--tenant", "acme"), ops.ID+`\s+ops`, ciID)
	mustRun(t, "tokens", "revoke", ops.ID, "--tenant", "acme")
	matches(t, "a token revoked by the admin", mustFail(t, "modules", "list", "--token", ops.Secret), `unauthorized \(HTTP 401\)`)
	matches(t, "unknown tenant", mustFail(t, "tokens", "list", "--tenant", "nobody"), `not_found \(HTTP 404\)`)

	// A parent and its children: runs list --parent lists them, runs get shows a child's parent.
	parent := runJSON[wire.Run](t, "start", "parent", "--wait", "--input", `{"n":4}`, "--token", tenantToken)
	if parent.Status != wire.RunCompleted || compactJSON(parent.Output) != `{"square":16,"audited":false}` {
		t.Fatalf("start parent --wait: %+v", parent)
	}
	kids := runJSON[wire.RunPage](t, "runs", "list", "--parent", parent.ID, "--token", tenantToken)
	if len(kids.Runs) != 1 || kids.Runs[0].ParentRunID != parent.ID || kids.Runs[0].ParentKey != "square" {
		t.Fatalf("runs list --parent: %+v", kids)
	}
	matches(t, "runs get of a child", mustRun(t, "runs", "get", "child", kids.Runs[0].ID, "--token", tenantToken),
		`parent\s+parent `+parent.ID+` at step square \(on its cancel: cancel\)`)

	// Without --token, the token a local daemon keeps in its data directory.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(tenantToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Unsetenv("WFHOST_TOKEN")
	matches(t, "token file", mustRun(t, "modules", "list", "--data-dir", dir), regexp.QuoteMeta(mods.Modules[0].Digest))
	matches(t, "no token", mustFail(t, "modules", "list"), `no tenant token`)
}

// TestClientCommandsRejectBadInputBeforeCallingTheServer: every malformed flag or argument
// fails in the CLI, with a message, and no request leaves it.
func TestClientCommandsRejectBadInputBeforeCallingTheServer(t *testing.T) {
	cleanEnv(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer srv.Close()
	t.Setenv("WFHOST_URL", srv.URL)
	t.Setenv("WFHOST_TOKEN", "tenant-token")
	t.Setenv("WFHOST_ADMIN_TOKEN", "admin-token")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"deploy"}, "needs 1 argument"},
		{[]string{"deploy", "/no/such/file.wasm"}, "no such file"},
		{[]string{"modules", "list", "extra"}, "needs 0 argument"},
		{[]string{"workflows", "list", "extra"}, "needs 0 argument"},
		{[]string{"start"}, "needs 1 argument"},
		{[]string{"start", "steps", "--input", "{nope"}, "--input is not valid JSON"},
		{[]string{"start", "steps", "--retention-days", "-1"}, "--retention-days must not be negative"},
		{[]string{"start", "steps", "--wait", "--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"runs", "list", "--since", "yesterday"}, "--since must be an RFC 3339 time"},
		{[]string{"runs", "list", "--until", "2026-13-45T00:00:00Z"}, "--until must be an RFC 3339 time"},
		{[]string{"runs", "list", "--input", "no-equals-sign"}, `--input "no-equals-sign" is not key=value`},
		{[]string{"runs", "list", "--input", "=1"}, "no key"},
		{[]string{"runs", "list", "--input", "a..b=1"}, "single dots"},
		{[]string{"runs", "list", "--limit", "0"}, "--limit must be at least 1"},
		{[]string{"runs", "list", "a", "b"}, "at most one argument"},
		{[]string{"runs", "list", "steps", "--workflow", "poll"}, "named twice"},
		{[]string{"runs", "get", "only-one-arg"}, "needs 2 argument"},
		{[]string{"runs", "steps", "wf"}, "needs 2 argument"},
		{[]string{"runs", "cancel"}, "needs 2 argument"},
		{[]string{"signal", "wf", "id"}, "needs 3 argument"},
		{[]string{"signal", "wf", "id", "ev", "--payload", "["}, "--payload is not valid JSON"},
		{[]string{"events", "send"}, "needs 1 argument"},
		{[]string{"events", "send", "ev", "--payload", "{"}, "--payload is not valid JSON"},
		{[]string{"tenants", "create"}, "needs 1 argument"},
		{[]string{"tenants", "create", "t1", "--limits", "{bad"}, "--limits is not valid JSON"},
		{[]string{"tenants", "create", "t1", "--limits", "[1]"}, "--limits must be a JSON object"},
		{[]string{"tenants", "create", "t1", "--admin-token", ""}, "needs the admin token"},
		{[]string{"tenants", "list", "x"}, "needs 0 argument"},
		{[]string{"tenants", "get", "a", "b"}, "at most one argument"},
		{[]string{"tenants", "set-limits", "t1"}, `"limits" not set`},
		{[]string{"tenants", "set-limits", "t1", "--limits", "5"}, "--limits must be a JSON object"},
		{[]string{"tokens", "create", "extra"}, "needs 0 argument"},
		{[]string{"tokens", "revoke"}, "needs 1 argument"},
		{[]string{"tokens", "list", "--tenant", "t1", "--admin-token", ""}, "needs the admin token"},
		{[]string{"modules", "list", "--token", ""}, "no tenant token"},
	}
	for _, c := range cases {
		out, err := wfhost(c.args...)
		if err == nil {
			t.Errorf("wfhost %s succeeded:\n%s", strings.Join(c.args, " "), out)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("wfhost %s: %v, want an error about %q", strings.Join(c.args, " "), err, c.want)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("bad commands made %d requests", n)
	}
}
