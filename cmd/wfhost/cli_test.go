package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/internal/testenv"
)

// The CLI's conventions (issue 17): exit codes by class, errors as one JSON object, global
// flags on either side of the command, --input from a file or stdin, and the messages the issue
// found wanting. Each runs the program as main does (run: the real flag rewriting, the real
// error mapping and exit code) against the real API over a real engine and Postgres.

// result is what one run of the program did.
type result struct {
	code           int
	stdout, stderr string
}

// invoke runs the program with stdin as its standard input.
func invoke(stdin string, args ...string) result {
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"wfhost"}, args...), strings.NewReader(stdin), &stdout, &stderr, os.Getenv)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// expect runs a command and fails the test unless it exits with code.
func expect(t *testing.T, code int, args ...string) result {
	t.Helper()
	r := invoke("", args...)
	if r.code != code {
		t.Fatalf("wfhost %s exited %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	return r
}

// jsonError is the shape of an error under --output json.
type jsonError struct {
	Error struct {
		Code       string `json:"code"`
		Message    string `json:"message"`
		HTTPStatus int    `json:"http_status"`
		ExitCode   int    `json:"exit_code"`
	} `json:"error"`
}

// expectJSONError runs a failing command with --output json and checks that stderr is exactly
// one JSON object that names the exit code the program returned, and that stdout is empty.
func expectJSONError(t *testing.T, code int, wantCode string, httpStatus int, args ...string) jsonError {
	t.Helper()
	r := expect(t, code, append(args, "--output", "json")...)
	var e jsonError
	dec := json.NewDecoder(strings.NewReader(r.stderr))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("wfhost %s: stderr is not one JSON error: %v\n%s", strings.Join(args, " "), err, r.stderr)
	}
	if dec.More() {
		t.Fatalf("wfhost %s: more than one JSON value on stderr:\n%s", strings.Join(args, " "), r.stderr)
	}
	if e.Error.ExitCode != code || e.Error.Code != wantCode || e.Error.HTTPStatus != httpStatus || e.Error.Message == "" {
		t.Fatalf("wfhost %s: error %+v, want code %q, http_status %d, exit_code %d", strings.Join(args, " "), e.Error, wantCode, httpStatus, code)
	}
	if strings.Contains(r.stdout, "exit_code") {
		t.Fatalf("wfhost %s: the error went to stdout:\n%s", strings.Join(args, " "), r.stdout)
	}
	return e
}

// newTenant creates a tenant with limits on the server at WFHOST_URL and returns its token.
func newTenant(t *testing.T, id, limits string) string {
	t.Helper()
	args := []string{"tenants", "create", id, "--admin-token", testAdminToken, "--json"}
	if limits != "" {
		args = append(args, "--limits", limits)
	}
	var created wire.TenantCreated
	if err := json.Unmarshal([]byte(expect(t, 0, args...).stdout), &created); err != nil {
		t.Fatal(err)
	}
	return created.Token.Secret
}

func testdata(name string) string { return filepath.Join(testenv.Root(), "testdata", name) }

// TestExitCodesByClass: each class of failure exits with its documented code, and under
// --output json prints one JSON object on stderr naming it; the server's code and status
// when the server answered.
func TestExitCodesByClass(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
	expect(t, 0, "deploy", testdata("examples.wasm"))

	// Usage: the command line is wrong; nothing is sent.
	for _, args := range [][]string{
		{"start"},
		{"nosuch"},
		{"runs", "nosuch"},
		{"start", "steps", "--bogus"},
		{"start", "steps", "--input", "{nope"},
		{"start", "steps", "--input", "@/no/such/file.json"},
		{"modules", "list", "--output", "xml"},
		{"modules", "list", "--json", "--output", "yaml"},
		{"modules", "list", "--url", "localhost:8080"},
		{"tenants", "set-limits", "acme", "--admin-token", testAdminToken},
		{"deploy", "/no/such/file.wasm"},
		{"completion", "tcsh"},
		{"runs", "list", "--version", ""},
		{"runs", "list", "--idempotency-key", ""},
		{"runs", "list", "--parent", ""},
	} {
		if !slices.Contains(args, "--output") {
			expectJSONError(t, exitUsage, "usage", 0, args...)
		}
		r := expect(t, exitUsage, args...)
		if !slices.Contains(args, "--output") && (!strings.HasPrefix(r.stderr, "wfhost: ") || strings.Count(r.stderr, "\n") != 1) {
			t.Fatalf("wfhost %s: want one line on stderr, got:\n%s", strings.Join(args, " "), r.stderr)
		}
	}

	// Auth: no token, or one the server refuses.
	expectJSONError(t, exitAuth, "unauthorized", 401, "modules", "list", "--token", "wfh_wrong")
	expectJSONError(t, exitAuth, "unauthorized", 401, "tenants", "list", "--admin-token", "wrong")
	expectJSONError(t, exitAuth, "unauthorized", 0, "tenants", "list")

	// Not found, conflict.
	e := expectJSONError(t, exitNotFound, "not_found", 404, "runs", "get", "steps", "no-such-run")
	if strings.HasSuffix(e.Error.Message, "not found") || e.Error.Message == "" {
		t.Fatalf("the message repeats its code: %q", e.Error.Message)
	}
	expectJSONError(t, exitConflict, "conflict", 409, "tenants", "create", "acme", "--admin-token", testAdminToken)

	// A run that fails, and one that does not end in time.
	failed := expect(t, exitRunFailed, "start", "order-saga", "--input", `{"orderId":"o1","amount":5,"failPayment":true}`, "--wait")
	matches(t, "start --wait of a failing run", failed.stdout, `status\s+failed`)
	matches(t, "start --wait of a failing run", failed.stderr, `^wfhost: run \S+ ended failed: card_declined\n$`)
	e = expectJSONError(t, exitRunFailed, "run_failed", 0, "start", "order-saga", "--input", `{"orderId":"o2","amount":5,"failPayment":true}`, "--wait")
	matches(t, "run_failed", e.Error.Message, `ended failed: card_declined`)
	expectJSONError(t, exitTimeout, "timeout", 0, "start", "onboarding", "--input", `{"email":"late@example.com","delayMs":1,"verifyTimeoutMs":600000}`, "--wait", "--timeout", "300ms")

	// Unavailable: nothing listening, or a 5xx.
	expectJSONError(t, exitUnavailable, "unavailable", 0, "modules", "list", "--url", "http://127.0.0.1:1")
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusInternalServerError} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"the store is unavailable; try again shortly"}}`))
		}))
		expectJSONError(t, exitUnavailable, "unavailable", status, "modules", "list", "--url", srv.URL)
		srv.Close()
	}

	// Other: a request the server refused as invalid.
	expectJSONError(t, exitOther, "invalid_request", 400, "tenants", "create", "Not An Id", "--admin-token", testAdminToken)
	// Success is 0, and prints nothing on stderr.
	if r := expect(t, 0, "workflows", "list"); r.stderr != "" {
		t.Fatalf("workflows list wrote to stderr: %s", r.stderr)
	}
}

// TestErrorMessagesSayTheirCodeOnce: a server error prints its code and status once, not
// "conflict (HTTP 409): conflict: ...".
func TestErrorMessagesSayTheirCodeOnce(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
	expect(t, 0, "deploy", testdata("examples.wasm"))
	run := expect(t, 0, "start", "steps", "--input", `{"n":1}`, "--wait", "--json")
	var r wire.Run
	if err := json.Unmarshal([]byte(run.stdout), &r); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tenants", "create", "acme", "--admin-token", testAdminToken}, `^wfhost: conflict \(HTTP 409\): create tenant acme: it exists\n$`},
		{[]string{"runs", "cancel", "steps", r.ID}, `^wfhost: conflict \(HTTP 409\): \S`},
		{[]string{"runs", "get", "poll", r.ID}, `^wfhost: not_found \(HTTP 404\): \S`},
		{[]string{"tenants", "create", "Not An Id", "--admin-token", testAdminToken}, `^wfhost: invalid_request \(HTTP 400\): \S`},
	} {
		res := invoke("", c.args...)
		matches(t, strings.Join(c.args, " "), res.stderr, c.want)
		for _, word := range []string{"conflict", "not found", "invalid request"} {
			if strings.Count(strings.ToLower(res.stderr), word) > 1 {
				t.Fatalf("wfhost %s says %q twice: %s", strings.Join(c.args, " "), word, res.stderr)
			}
		}
	}
}

// TestGlobalFlagsBeforeAndAfterTheCommand: --url, --token and --output (-o; --json the same as
// --output json) work before the command, after it and after its arguments; the per-command
// spelling still works, and the last one given wins.
func TestGlobalFlagsBeforeAndAfterTheCommand(t *testing.T) {
	cleanEnv(t)
	url := serve(t)
	t.Setenv("WFHOST_URL", url)
	token := newTenant(t, "acme", "")
	os.Unsetenv("WFHOST_URL")
	expect(t, 0, "deploy", testdata("examples.wasm"), "--url", url, "--token", token)

	workflows := func(args ...string) {
		t.Helper()
		r := expect(t, 0, args...)
		var page wire.WorkflowPage
		if err := json.Unmarshal([]byte(r.stdout), &page); err != nil || len(page.Workflows) != 12 { // the examples: charge-or-pause, parent, child, parallel and digest included
			t.Fatalf("wfhost %s: %v\n%s", strings.Join(args, " "), err, r.stdout)
		}
	}
	workflows("--url", url, "--token", token, "--output", "json", "workflows", "list")
	workflows("--url="+url, "--token="+token, "-o", "json", "workflows", "list")
	workflows("workflows", "list", "--url", url, "--token", token, "--json")
	workflows("--url", url, "workflows", "--token", token, "list", "-o=json")
	workflows("--json", "workflows", "list", "--url", url, "--token", token)
	// The flag after the command wins over the one before it.
	workflows("--url", "http://127.0.0.1:1", "workflows", "list", "--url", url, "--token", token, "--output", "json")
	expect(t, exitUnavailable, "--url", url, "workflows", "list", "--url", "http://127.0.0.1:1", "--token", token)
	// Flags after the arguments, as before.
	out := expect(t, 0, "start", "steps", "--input", `{"n":2}`, "--wait", "--url", url, "--token", token).stdout
	matches(t, "start with flags after the argument", out, `status\s+completed`)
	out = expect(t, 0, "--url", url, "--token", token, "start", "steps", "--input", `{"n":2}`, "-o", "yaml", "--wait").stdout
	matches(t, "start -o yaml", out, `(?m)^status: completed$`, `(?m)^output:\n  sum: 1$`, `(?m)^input:\n  "n": 2$`)
	// A global flag a command does not have is the app's: accepted before and after it.
	matches(t, "version -o json", expect(t, 0, "-o", "json", "version").stdout, `"version": "`+regexp.QuoteMeta(version())+`"`)
	matches(t, "version -o json", expect(t, 0, "version", "--output", "json").stdout, `"version": "`)
	// --help lists the global flags.
	matches(t, "--help", expect(t, 0, "--help").stdout, `--url value`, `--token value`, `--output value, -o value`)
}

// TestInputFromFileAndStdin: --input and --payload read "@FILE" from a file and "-" from stdin;
// a 5 MB input, too big for a shell's argument list, starts a run whose stored input is the
// file's. (The API takes JSON bodies of 2 MiB, or as much as the tenant's limits allow an
// input or event to be: this tenant's are 8 MiB.)
func TestInputFromFileAndStdin(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	// The Go guest decodes the whole 5 MB input in every activation; under the race detector
	// and a loaded machine that took longer than the test server's 5 s activation limit, which
	// is not what this test is about: the tenant's limit is a minute.
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", `{"maxInputBytes": 8388608, "maxEventBytes": 8388608, "activationTimeoutMs": 60000}`))
	expect(t, 0, "deploy", testdata("examples.wasm"))

	// The steps workflow reads n and ignores the rest: the padding travels and is stored.
	big := `{"n":2,"pad":"` + strings.Repeat("0123456789", 500_000) + `"}`
	file := filepath.Join(t.TempDir(), "input.json")
	if err := os.WriteFile(file, []byte(big+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	started := runOf(t, expect(t, 0, "start", "steps", "--input", "@"+file, "--wait", "--json"))
	if started.Status != wire.RunCompleted || compactJSON(started.Output) != `{"sum":1}` {
		t.Fatalf("a run of a 5 MB input: %s %s", started.Status, started.Output)
	}
	stored := runOf(t, expect(t, 0, "runs", "get", "steps", started.ID, "--json"))
	if compactJSON(stored.Input) != big {
		t.Fatalf("the stored input is %d bytes, not the file's %d", len(compactJSON(stored.Input)), len(big))
	}

	// stdin.
	fromStdin := runOf(t, cliOK(t, `{"n": 3}`, "start", "steps", "--input", "-", "--wait", "--json"))
	if compactJSON(fromStdin.Input) != `{"n":3}` || compactJSON(fromStdin.Output) != `{"sum":3}` {
		t.Fatalf("a run of stdin's input: %s -> %s", fromStdin.Input, fromStdin.Output)
	}

	// Payloads: a signal from a file, a broadcast from stdin.
	waiting := runOf(t, expect(t, 0, "start", "onboarding", "--input", `{"email":"ada@example.com","delayMs":1,"verifyTimeoutMs":600000}`, "--json"))
	awaitVerify(t, waiting.ID)
	payload := filepath.Join(t.TempDir(), "payload.json")
	if err := os.WriteFile(payload, []byte(`{"userId":"`+onboardingUser("ada@example.com")+`","via":"file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	matches(t, "signal --payload @file", expect(t, 0, "signal", "onboarding", waiting.ID, "verify", "--payload", "@"+payload).stdout, `delivered`)
	awaitCompleted(t, "onboarding", waiting.ID)
	matches(t, "the signalled run", expect(t, 0, "runs", "get", "onboarding", waiting.ID).stdout, `verified via file`)
	out := cliOK(t, `{"email":"grace@example.com","delayMs":1,"verifyTimeoutMs":600000}`, "events", "send", "user.signed_up", "--payload", "-").stdout
	matches(t, "events send --payload -", out, `started\s+1 run`)

	// A file that is not JSON is refused before anything is sent, without quoting its bytes.
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(strings.Repeat("x", 1<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := expect(t, exitUsage, "start", "steps", "--input", "@"+bad)
	if !strings.Contains(r.stderr, "is not valid JSON") || len(r.stderr) > 500 {
		t.Fatalf("a bad input file: %d bytes on stderr: %.300s", len(r.stderr), r.stderr)
	}
	expect(t, exitUsage, "signal", "onboarding", waiting.ID, "verify", "--payload", "@"+filepath.Join(t.TempDir(), "missing.json"))
}

func cliOK(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	r := invoke(stdin, args...)
	if r.code != 0 {
		t.Fatalf("wfhost %s exited %d:\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

func runOf(t *testing.T, r result) wire.Run {
	t.Helper()
	var run wire.Run
	if err := json.Unmarshal([]byte(r.stdout), &run); err != nil {
		t.Fatalf("not a run: %v\n%.500s", err, r.stdout)
	}
	return run
}

// TestDeployConflictNamesTheReplaceFlag: a deploy that would rebind a workflow version says
// which flag does it, --replace, and with it the deploy goes through.
func TestDeployConflictNamesTheReplaceFlag(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
	expect(t, 0, "deploy", testdata("examples.wasm"))
	other := testdata("examples_renamed.wasm")
	r := expect(t, exitConflict, "deploy", other)
	matches(t, "deploy conflict", r.stderr, `^wfhost: conflict \(HTTP 409\): workflow \S+ version \S+ is bound to module [0-9a-f]+; `,
		regexp.QuoteMeta("run: wfhost deploy --replace "+other)+`\n$`)
	if strings.Contains(r.stderr, "deploy with replace") || strings.Count(r.stderr, "conflict") != 1 {
		t.Fatalf("deploy conflict: %s", r.stderr)
	}
	e := expectJSONError(t, exitConflict, "conflict", 409, "deploy", other)
	matches(t, "deploy conflict, JSON", e.Error.Message, `^workflow .*--replace`)
	expect(t, 0, "deploy", other, "--replace")
}

// TestStartWaitPrintsAFailedRunsStackOnce: start --wait of a run that trapped prints the run,
// with the guest's stack in its error, and then the command's error, which names the code only.
func TestStartWaitPrintsAFailedRunsStackOnce(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
	expect(t, 0, "deploy", testdata("hostile.wasm"))
	r := expect(t, exitRunFailed, "start", "trap", "--wait")
	matches(t, "a trapped run", r.stdout, `status\s+failed`, `error\s+trap: `, `goroutine`)
	matches(t, "a trapped run", r.stderr, `^wfhost: run \S+ ended failed: trap\n$`)
	both := r.stdout + r.stderr
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, "goroutine") && strings.Count(both, line) != 1 {
			t.Fatalf("%q shows %d times:\n%s", line, strings.Count(both, line), both)
		}
	}
	y := expect(t, exitRunFailed, "start", "trap", "--wait", "-o", "yaml")
	matches(t, "a trapped run as YAML", y.stdout, `(?m)^status: failed$`, `(?m)^error:\n  code: trap\n  message: "the guest trapped`)
}

// TestStartWaitPrintsAPanicsStackOnce: a Go workflow that panics, in its body or in a step,
// fails with code panic; start --wait and runs get print the message with the code once and
// the stack from the error's details once, as its own rows, and the command's error names the
// code only. The YAML document has the stack once too, in details.
func TestStartWaitPrintsAPanicsStackOnce(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
	expect(t, 0, "deploy", testdata("hostile.wasm"))
	for _, c := range []struct{ input, message string }{
		{`{}`, `error\s+panic: workflow panicked: runtime error: index out of range \[11\] with length 0\n`},
		{`{"inStep":true}`, `error\s+panic: step explode failed: panic: step panicked: runtime error: index out of range \[9\] with length 0\n`},
	} {
		r := expect(t, exitRunFailed, "start", "panic", "--input", c.input, "--wait")
		matches(t, "a panicked run", r.stdout, `status\s+failed`, c.message, `\nstack\s+goroutine \d+ \[running\]:\n`, `\n\s+\S*probes\.panicHere`)
		matches(t, "a panicked run", r.stderr, `^wfhost: run \S+ ended failed: panic\n$`)
		both := r.stdout + r.stderr
		if n := strings.Count(both, "probes.panicHere("); n != 1 || strings.Count(both, "panic: panic") != 0 || strings.Contains(both, "\t/") {
			t.Fatalf("the stack shows %d times (want once, its tabs as spaces):\n%s", n, both)
		}
		id := regexp.MustCompile(`(?m)^run\s+(\S+)$`).FindStringSubmatch(r.stdout)
		if id == nil {
			t.Fatalf("no run id in:\n%s", r.stdout)
		}
		got := expect(t, 0, "runs", "get", "panic", id[1])
		matches(t, "runs get", got.stdout, c.message, `\nstack\s+goroutine `)
		if n := strings.Count(got.stdout, "probes.panicHere("); n != 1 {
			t.Fatalf("runs get shows the stack %d times:\n%s", n, got.stdout)
		}
		y := expect(t, exitRunFailed, "start", "panic", "--input", c.input, "--wait", "-o", "yaml")
		matches(t, "a panicked run as YAML", y.stdout, `(?m)^error:\n  code: panic\n  message: `, `(?m)^  details:\n    stack: \|`)
		if n := strings.Count(y.stdout, "probes.panicHere("); n != 1 {
			t.Fatalf("the YAML shows the stack %d times:\n%s", n, y.stdout)
		}
	}
}

// TestPrintStackKeepsTheTableAndTheTerminal: a stack from details prints as rows under one
// another, its tabs as spaces and control characters (an escape sequence a hostile guest
// put there) as U+FFFD; details without a stack, or not JSON, print nothing.
func TestPrintStackKeepsTheTableAndTheTerminal(t *testing.T) {
	var b strings.Builder
	printStack(&b, json.RawMessage(`{"stack":"goroutine 1 [running]:\nmain.f()\n\t/src/main.go:3 +0x1\n\u001b[2J\u0007bell\u0085\n"}`))
	want := "stack\tgoroutine 1 [running]:\n\tmain.f()\n\t    /src/main.go:3 +0x1\n\t\ufffd[2J\ufffdbell\ufffd\n"
	if b.String() != want {
		t.Fatalf("printStack:\n%q\nwant\n%q", b.String(), want)
	}
	for _, d := range []string{``, `null`, `{"left":3}`, `{"stack":7}`, `{"stack":"  \n"}`, `not json`, `{"stack":"a"`} {
		b.Reset()
		printStack(&b, json.RawMessage(d))
		if b.Len() != 0 {
			t.Errorf("details %q printed %q", d, b.String())
		}
	}
}

// TestSignalThatMatchesNoWaitSaysSo: a signal whose payload misses what the run waits for (the
// README's USER_ID wrong) is buffered, as the API defines; the CLI says why, with the match
// the wait wants, and the steps table shows that match. A run that does not exist is a 404.
func TestSignalThatMatchesNoWaitSaysSo(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
	expect(t, 0, "deploy", testdata("examples.wasm"))
	waiting := runOf(t, expect(t, 0, "start", "onboarding", "--input", `{"email":"ada@example.com","delayMs":1,"verifyTimeoutMs":600000}`, "--json"))
	awaitVerify(t, waiting.ID)
	user := onboardingUser("ada@example.com")
	matches(t, "runs steps", expect(t, 0, "runs", "steps", "onboarding", waiting.ID).stdout,
		`await-verify\s+wait\s+waiting\s+-\s+-\s+waiting for verify matching \{"userId":"`+user+`"\}, until `)

	r := expect(t, 0, "signal", "onboarding", waiting.ID, "verify", "--payload", `{"userId":"u-wrong"}`)
	matches(t, "a signal that matches no wait", r.stdout, `event verify buffered for run `+waiting.ID,
		`the payload does not match what run `+waiting.ID+` waits for: its wait "await-verify" takes verify events matching \{"userId":"`+user+`"\}`)
	// Under --json stdout is the server's answer alone; the note goes to stderr.
	r = expect(t, 0, "signal", "onboarding", waiting.ID, "verify", "--payload", `{"userId":"u-wrong"}`, "--json")
	var res wire.SignalResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.State != wire.SignalBuffered {
		t.Fatalf("signal --json: %v %+v\n%s", err, res, r.stdout)
	}
	matches(t, "signal --json", r.stderr, `^wfhost: note: the payload does not match`)
	// An event the run does not wait for at all.
	matches(t, "another event", expect(t, 0, "signal", "onboarding", waiting.ID, "cancel-request").stdout,
		`run `+waiting.ID+` is waiting for verify, not cancel-request`)
	// The right id is delivered, with no note.
	r = expect(t, 0, "signal", "onboarding", waiting.ID, "verify", "--payload", `{"userId":"`+user+`"}`)
	if strings.Contains(r.stdout, "not") || !strings.Contains(r.stdout, "delivered") {
		t.Fatalf("a matching signal: %s", r.stdout)
	}
	expectJSONError(t, exitNotFound, "not_found", 404, "signal", "onboarding", "no-such-run", "verify")
}

// TestVersionCommandAndCompletion: `wfhost version` prints what --version does; `completion`
// prints a script for bash, zsh and fish, and the completion requests those scripts make
// answer with the commands and flags that may come next.
func TestVersionCommandAndCompletion(t *testing.T) {
	cleanEnv(t)
	if v, flag := expect(t, 0, "version").stdout, expect(t, 0, "--version").stdout; v != flag || v != "wfhost version "+version()+"\n" {
		t.Fatalf("version printed %q, --version %q", v, flag)
	}
	bash := expect(t, 0, "completion", "bash").stdout
	matches(t, "completion bash", bash, `--generate-bash-completion`, `complete .* wfhost\n$`)
	matches(t, "completion zsh", expect(t, 0, "completion", "zsh").stdout, `^#compdef wfhost`, `compdef _wfhost wfhost`)
	matches(t, "completion fish", expect(t, 0, "completion", "fish").stdout, `complete .*-c wfhost .*-a 'start'`, `-l input`)
	if sh, err := exec.LookPath("bash"); err == nil {
		if out, err := exec.Command(sh, "-n", "-c", bash).CombinedOutput(); err != nil {
			t.Fatalf("the bash script does not parse: %v\n%s", err, out)
		}
	}
	// urfave/cli's completions read os.Args: TestTheBuiltBinary asks for them.
}

// TestTheBuiltBinary: the program as built exits with the documented codes and prints a JSON
// error on stderr, and completes a command's flags as the completion scripts ask it to.
func TestTheBuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	cleanEnv(t)
	bin := filepath.Join(t.TempDir(), "wfhost")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	exit := func(stdin string, args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
	}
	if code, out, _ := exit("", "version"); code != 0 || !strings.HasPrefix(out, "wfhost version ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, _, errOut := exit("", "start"); code != exitUsage || errOut != "wfhost: start needs 1 argument(s): WORKFLOW\n" {
		t.Fatalf("start without a workflow: %d %q", code, errOut)
	}
	code, _, errOut := exit(`{"n":1}`, "--url", "http://127.0.0.1:1", "--token", "t", "-o", "json", "start", "steps", "--input", "-")
	var e jsonError
	if code != exitUnavailable || json.Unmarshal([]byte(errOut), &e) != nil || e.Error.Code != "unavailable" || e.Error.ExitCode != exitUnavailable {
		t.Fatalf("a daemon that is not there: %d %q", code, errOut)
	}
	// What the completion scripts ask: the subcommands of runs, and start's flags.
	_, out, _ := exit("", "runs", "--generate-bash-completion")
	matches(t, "runs completions", out, `(?m)^list$`, `(?m)^cancel$`)
	_, out, _ = exit("", "start", "--i", "--generate-bash-completion")
	matches(t, "start's flag completions", out, `(?m)^--input$`, `(?m)^--idempotency-key$`)
}

// TestSignalIDsAndSignalWithStart: `signal --id` makes a retry change nothing, and
// `signal-with-start` starts the run a key names with the event kept for it, then signals it
// while it is open.
func TestSignalIDsAndSignalWithStart(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
	expect(t, 0, "deploy", testdata("examples.wasm"))
	user := onboardingUser("sws@example.com")
	input := `{"email":"sws@example.com","delayMs":1,"verifyTimeoutMs":600000}`

	r := expect(t, 0, "signal-with-start", "onboarding", "signup-1", "verify", "--input", input, "--payload", `{"userId":"nobody"}`, "--json")
	var first wire.SignalWithStartResult
	if err := json.Unmarshal([]byte(r.stdout), &first); err != nil || !first.Created || first.Signal.State != wire.SignalBuffered {
		t.Fatalf("first signal-with-start: %v %+v\n%s", err, first, r.stdout)
	}
	awaitVerify(t, first.Run.ID)
	r = expect(t, 0, "signal-with-start", "onboarding", "signup-1", "verify", "--payload", `{"userId":"`+user+`"}`, "--id", "v-1")
	matches(t, "signal-with-start to the open run", r.stdout, `run `+first.Run.ID+` of onboarding@1 is open under key signup-1`, `event verify delivered to it`)
	// The same signal id again, now as a plain signal to the run: acknowledged, nothing sent.
	r = expect(t, 0, "signal", "onboarding", first.Run.ID, "verify", "--payload", `{"userId":"`+user+`"}`, "--id", "v-1")
	matches(t, "a repeated signal id", r.stdout, `signal v-1 was sent to run `+first.Run.ID+` before: nothing changed \(it was delivered then\)`)
	expectJSONError(t, exitUsage, "usage", 0, "signal-with-start", "onboarding", "signup-1")

	// A workflow deadline from --run-timeout: the run waits for ten minutes and fails at 1 s.
	late := runOf(t, expect(t, 0, "start", "onboarding", "--input", `{"email":"late@example.com","delayMs":1,"verifyTimeoutMs":600000}`,
		"--run-timeout", "1s", "--json"))
	if late.Deadline == nil || late.Deadline.Sub(late.CreatedAt) < 900*time.Millisecond {
		t.Fatalf("the run's deadline %v, created %v: want about 1 s after it", late.Deadline, late.CreatedAt)
	}
	testenv.Await(t, 30*time.Second, func() error {
		if r := runJSON[wire.Run](t, "runs", "get", "onboarding", late.ID); r.Status != wire.RunFailed {
			return fmt.Errorf("run %s is %s, want failed", late.ID, r.Status)
		}
		return nil
	})
	matches(t, "a run past its deadline", expect(t, 0, "runs", "get", "onboarding", late.ID).stdout, `run_timeout`)
	expectJSONError(t, exitUsage, "usage", 0, "start", "onboarding", "--run-timeout", "-5s")
}

// TestStartWaitFollowsAChain: start --wait follows a run that continues as new, and one retried
// by its --retry-* policy, to the run that ends its chain, saying on stderr which run went on
// as which; runs get shows the links. Malformed retry flags are usage errors.
func TestStartWaitFollowsAChain(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
	expect(t, 0, "deploy", testdata("examples.wasm"))

	r := expect(t, 0, "start", "ticker", "--input", `{"turns":3,"ticks":2}`, "--wait")
	matches(t, "a ticker of three turns", r.stdout, `status\s+completed`, `output\s+\{.*"turns":3`, `output\s+\{.*"total":21`, `continues\s+\S+`)
	if n := strings.Count(r.stderr, "continued; continued as "); n != 2 {
		t.Fatalf("stderr names %d continuations, want 2:\n%s", n, r.stderr)
	}
	last := runOf(t, expect(t, 0, "start", "ticker", "--input", `{"turns":2}`, "--wait", "--json"))
	first := runJSON[wire.Run](t, "runs", "get", "ticker", last.ContinuedFrom)
	if first.Status != wire.RunContinued || first.ContinuedAs != last.ID {
		t.Fatalf("the chain's first run: %s continued as %q, want continued as %s", first.Status, first.ContinuedAs, last.ID)
	}
	matches(t, "the continued run", expect(t, 0, "runs", "get", "ticker", first.ID).stdout, `status\s+continued`, `continued as\s+`+last.ID)

	f := expect(t, exitRunFailed, "start", "order-saga", "--input", `{"orderId":"o-1","amount":3,"failPayment":true}`,
		"--retry-attempts", "2", "--retry-backoff", "fixed", "--retry-delay", "10ms", "--wait")
	matches(t, "a run retried once", f.stdout, `status\s+failed`, `attempt\s+2 of 2`, `continues\s+\S+`)
	matches(t, "a run retried once", f.stderr, `run \S+ failed; continued as \S+\n`, `wfhost: run \S+ ended failed: card_declined\n$`)

	expectJSONError(t, exitUsage, "usage", 0, "start", "ticker", "--retry-attempts", "0")
	expectJSONError(t, exitUsage, "usage", 0, "start", "ticker", "--retry-attempts", "2", "--retry-backoff", "sometimes")
	expectJSONError(t, exitUsage, "usage", 0, "start", "ticker", "--retry-delay", "1s")
	expectJSONError(t, exitUsage, "usage", 0, "start", "ticker", "--retry-attempts", "5000")
}

// TestRunsCancelTellsTheWorkflow: runs cancel asks the run to cancel itself and says until
// when it may compensate; with --wait it prints the run's end (cancelled, the saga's hold
// cancelled and its reservation released). runs terminate stops one at once.
func TestRunsCancelTellsTheWorkflow(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
	expect(t, 0, "deploy", testdata("examples.wasm"))
	saga := runOf(t, expect(t, 0, "start", "order-saga", "--input", `{"orderId":"o-5","amount":2,"holdMs":600000}`, "--json"))
	testenv.Await(t, 30*time.Second, func() error {
		if out := expect(t, 0, "runs", "steps", "order-saga", saga.ID).stdout; !strings.Contains(out, "hold") {
			return fmt.Errorf("the saga has not reached its hold:\n%s", out)
		}
		return nil
	})
	r := expect(t, 0, "runs", "cancel", "order-saga", saga.ID, "--grace", "30s", "--wait")
	matches(t, "a cancelled saga", r.stdout, `status\s+cancelled`, `error\s+cancelled: sleep hold: the run was cancelled`, `cancel requested\s+\S+`)
	matches(t, "its journal", expect(t, 0, "runs", "steps", "order-saga", saga.ID).stdout, `hold\s+sleep\s+cancelled`, `release-inventory\s+run\s+completed`)
	expectJSONError(t, exitConflict, "conflict", 409, "runs", "cancel", "order-saga", saga.ID)
	expectJSONError(t, exitUsage, "usage", 0, "runs", "cancel", "order-saga", saga.ID, "--grace", "0s")
	expectJSONError(t, exitUsage, "usage", 0, "runs", "cancel", "order-saga", saga.ID, "--grace", "-1s")

	other := runOf(t, expect(t, 0, "start", "order-saga", "--input", `{"orderId":"o-6","amount":2,"holdMs":600000}`, "--json"))
	matches(t, "runs terminate", expect(t, 0, "runs", "terminate", "order-saga", other.ID).stdout, `status\s+cancelled`, `error\s+cancelled: the run was cancelled`)
}

// TestRunsRestart: runs restart runs a failed saga again from its charge with a card that
// works; the new run names the run it restarts and keeps its reservation. A live run and a step
// the run never reached are refused.
func TestRunsRestart(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
	expect(t, 0, "deploy", testdata("examples.wasm"))
	failed := runOf(t, expect(t, exitRunFailed, "start", "order-saga", "--input", `{"orderId":"o-7","amount":2,"failPayment":true}`, "--wait", "--json"))
	r := expect(t, 0, "runs", "restart", "order-saga", failed.ID, "--input", `{"orderId":"o-7","amount":2}`, "--from-step", "charge-payment")
	matches(t, "the restart", r.stdout, `status\s+pending`, `restarts\s+`+failed.ID)
	next := runOf(t, expect(t, 0, "runs", "restart", "order-saga", failed.ID, "--input", `{"orderId":"o-7","amount":2}`, "--json"))
	matches(t, "what started each", expect(t, 0, "runs", "get", "order-saga", next.ID).stdout, `triggered by\s+restart of run `+failed.ID)
	matches(t, "what started each", expect(t, 0, "runs", "get", "order-saga", failed.ID).stdout, `triggered by\s+api start`)
	testenv.Await(t, 30*time.Second, func() error {
		if got := runJSON[wire.Run](t, "runs", "get", "order-saga", next.ID); got.Status != wire.RunCompleted {
			return fmt.Errorf("the restart is %s", got.Status)
		}
		return nil
	})
	expectJSONError(t, exitOther, "invalid_request", 400, "runs", "restart", "order-saga", failed.ID, "--from-step", "no-such-step")
	live := runOf(t, expect(t, 0, "start", "order-saga", "--input", `{"orderId":"o-8","amount":2,"holdMs":600000}`, "--json"))
	expectJSONError(t, exitConflict, "conflict", 409, "runs", "restart", "order-saga", live.ID)
	expectJSONError(t, exitUsage, "usage", 0, "runs", "restart", "order-saga", failed.ID, "--input", "{not json")
}

// TestRunsQuery: runs query asks a live run the query its workflow registered and prints the
// answer; --arg is its argument; an unknown query, a bad argument and an ended run each fail
// with their own code.
func TestRunsQuery(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
	expect(t, 0, "deploy", testdata("examples.wasm"))
	run := runOf(t, expect(t, 0, "start", "onboarding", "--input", `{"email":"Ada@Example.com","delayMs":10,"verifyTimeoutMs":600000}`, "--json"))
	testenv.Await(t, 30*time.Second, func() error {
		if out := expect(t, 0, "runs", "steps", "onboarding", run.ID).stdout; !regexp.MustCompile(`await-verify\s+wait\s+waiting`).MatchString(out) {
			return fmt.Errorf("the run has not reached its wait:\n%s", out)
		}
		return nil
	})
	matches(t, "runs query", expect(t, 0, "runs", "query", "onboarding", run.ID, "status", "--arg", `{"who":"ops"}`).stdout,
		`"stage": "awaiting-verify"`, `"userId": "u-`, `"who": "ops"`)
	matches(t, "runs query --json", expect(t, 0, "runs", "query", "onboarding", run.ID, "status", "--json").stdout,
		`"result"`, `"arg": null`, `"key": "await-verify"`)
	expectJSONError(t, exitNotFound, "unknown_query", 404, "runs", "query", "onboarding", run.ID, "no-such-query")
	expectJSONError(t, exitOther, "invalid_request", 400, "runs", "query", "onboarding", run.ID, "st\x01atus")
	expectJSONError(t, exitUsage, "usage", 0, "runs", "query", "onboarding", run.ID, "status", "--arg", `{"who":`)
	expectJSONError(t, exitUsage, "usage", 0, "runs", "query", "onboarding", run.ID)
	expectJSONError(t, exitNotFound, "not_found", 404, "runs", "query", "onboarding", "00000000-0000-4000-8000-000000000000", "status")

	expect(t, 0, "runs", "terminate", "onboarding", run.ID)
	expectJSONError(t, exitConflict, "run_ended", 409, "runs", "query", "onboarding", run.ID, "status")
}
