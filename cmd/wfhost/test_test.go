package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWfhostTest: wfhost test runs a scenario of the examples on the Go module with every
// variant and passes (exit 0, a summary line, --json for programs); a scenario whose
// expectation is wrong, or whose workflow the module lacks, fails with exit 10 and says why.
func TestWfhostTest(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_DATA_DIR", t.TempDir())
	module := testdata("examples.wasm")
	steps := filepath.Join("..", "..", "examples", "wasm", "scenarios", "steps-hourly.json")
	r := expect(t, 0, "test", "--module", module, steps)
	matches(t, "a passing scenario", r.stdout, `PASS  steps: three steps an hour apart  \(\d+ variants, `, `1 passed, 0 failed`)

	var doc struct {
		Passed, Failed int
		Scenarios      []struct {
			Passed   bool
			Variants []struct{ Name, Problem, VirtualTime string }
		}
	}
	if err := json.Unmarshal([]byte(expect(t, 0, "test", "--json", "--module", module, steps).stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Passed != 1 || doc.Failed != 0 || len(doc.Scenarios) != 1 || len(doc.Scenarios[0].Variants) < 3 {
		t.Fatalf("--json: %+v", doc)
	}
	// Two hours of sleeps, and maybe a second or so the engine waited on a timer of its own.
	if v := doc.Scenarios[0].Variants[0]; v.Name != "baseline" || !strings.HasPrefix(v.VirtualTime, "2h0m") {
		t.Fatalf("baseline %+v, want two hours of virtual time", v)
	}

	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wrong := write("wrong.json", `{"workflow":"steps","input":{"n":2},"expect":{"status":"completed","output":{"sum":5}}}`)
	r = expect(t, exitTestFailed, "test", "--no-crashes", "--module", module, wrong, steps)
	matches(t, "a wrong expectation", r.stdout, `FAIL  wrong  \(1 variants`, `baseline: output \{"sum":1\}, want \{"sum":5\}`, `1 passed, 1 failed`)
	matches(t, "its error", r.stderr, `1 of 2 scenarios failed`)
	// The HTTP fakes and the fake secret reach the guest: the fake answers only the request
	// that carries the bearer token made from the secret.
	fetch := filepath.Join("..", "..", "examples", "wasm", "scenarios", "capabilities", "http-fetch-with-secret.json")
	matches(t, "http fakes", expect(t, 0, "test", "--module", testdata("capabilities.wasm"), fetch).stdout, `PASS  http-fetch: a GET with a bearer token`)
	unanswered := write("unanswered.json", `{"workflow":"http-fetch","input":{"url":"https://api.example.com/elsewhere"},`+
		`"http":[{"method":"GET","url":"https://api.example.com/orders/7","status":200}],"expect":{"status":"completed"}}`)
	matches(t, "a request no fake answers", expect(t, exitTestFailed, "test", "--no-crashes", "--module", testdata("capabilities.wasm"), unanswered).stdout,
		`FAIL  unanswered`, `baseline: ended failed`)
	missing := write("missing.json", `{"workflow":"no-such-workflow","expect":{"status":"completed"}}`)
	matches(t, "a workflow the module lacks", expect(t, exitTestFailed, "test", "--module", module, missing).stdout, `FAIL  missing`, `start no-such-workflow: .*not found`)
}

// TestWfhostTestRefusesBadInput: malformed, oversized, non-UTF-8 and hostile scenario files
// and flags are refused with exit 2 and a short message naming what is wrong, before anything
// runs.
func TestWfhostTestRefusesBadInput(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_DATA_DIR", t.TempDir())
	module := testdata("examples.wasm")
	dir := t.TempDir()
	write := func(name string, body []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ body, want string }{
		{`{`, `not a scenario`},
		{`[]`, `not a scenario`},
		{"\xff\xfe{}", `not UTF-8`},
		{`{"workflow":"steps","expect":{"status":"completed"},"unknown":1}`, `unknown field "unknown"`},
		{`{"workflow":"steps","expect":{"status":"completed"}} {}`, `more than one JSON value`},
		{`{"expect":{"status":"completed"}}`, `workflow must be 1 to`},
		{`{"workflow":"a\u0000b","expect":{"status":"completed"}}`, `without control characters`},
		{`{"workflow":"` + strings.Repeat("w", 5000) + `","expect":{"status":"completed"}}`, `workflow must be 1 to`},
		{`{"workflow":"steps"}`, `expect.status is required`},
		{`{"workflow":"steps","expect":{"status":"done"}}`, `expect.status "done"`},
		{`{"workflow":"steps","expect":{"status":"failed","output":1}}`, `expect.output is for a completed run`},
		{`{"workflow":"steps","events":[{"at":"soon","name":"e"}],"expect":{"status":"completed"}}`, `duration "soon"`},
		{`{"workflow":"steps","events":[{"at":"-1h","name":"e"}],"expect":{"status":"completed"}}`, `is negative`},
		{`{"workflow":"steps","events":[{"at":"99999999d","name":"e"}],"expect":{"status":"completed"}}`, `days must be a whole number`},
		{`{"workflow":"steps","events":[{"at":"2h","name":"e"},{"at":"1h","name":"e"}],"expect":{"status":"completed"}}`, `list events in time order`},
		{`{"workflow":"steps","events":[{"at":"1h","name":""}],"expect":{"status":"completed"}}`, `events\[0\].name`},
		{`{"workflow":"steps","expect":{"status":"completed"},"input":"` + strings.Repeat("x", 1<<20) + `"}`, `at most 1048576 bytes`},
		{`{"workflow":"steps","http":[{"method":"BREW","url":"https://a.example","status":200}],"expect":{"status":"completed"}}`, `http\[0\]: method "BREW"`},
		{`{"workflow":"steps","http":[{"method":"GET","url":"ftp://a.example/x","status":200}],"expect":{"status":"completed"}}`, `http\[0\]: url "ftp://a.example/x"`},
		{`{"workflow":"steps","http":[{"method":"GET","url":"/relative","status":200}],"expect":{"status":"completed"}}`, `want an absolute http or https URL`},
		{`{"workflow":"steps","http":[{"method":"GET","url":"https://a.example","status":700}],"expect":{"status":"completed"}}`, `status 700`},
		{`{"workflow":"steps","http":[{"method":"GET","url":"https://a.example","status":200,"headers":{"X":"a\r\nSet-Cookie: b"}}],"expect":{"status":"completed"}}`, `one line`},
		{`{"workflow":"steps","http":[{"method":"GET","url":"https://a.example","status":200},{"method":"GET","url":"https://a.example","status":500}],"expect":{"status":"completed"}}`, `a second fake for GET https://a.example`},
	} {
		r := expect(t, exitUsage, "test", "--module", module, write("bad.json", []byte(c.body)))
		matches(t, c.want, r.stderr, c.want)
		if len(r.stderr) > 600 {
			t.Errorf("%.40q: a message of %d bytes", c.body, len(r.stderr))
		}
	}
	good := filepath.Join("..", "..", "examples", "wasm", "scenarios", "steps-hourly.json")
	matches(t, "no argument", expect(t, exitUsage, "test", "--module", module).stderr, `needs at least 1 argument`)
	matches(t, "no module", expect(t, exitUsage, "test", good).stderr, `module`)
	matches(t, "a missing module", expect(t, exitUsage, "test", "--module", filepath.Join(dir, "none.wasm"), good).stderr, `--module: .*no such file`)
	matches(t, "a module that is not wasm", expect(t, exitUsage, "test", "--module", write("not.wasm", []byte("hello")), good).stderr, `--module`)
	matches(t, "a missing file", expect(t, exitUsage, "test", "--module", module, filepath.Join(dir, "none.json")).stderr, `no such file`)
	empty := t.TempDir()
	matches(t, "an empty directory", expect(t, exitUsage, "test", "--module", module, empty).stderr, `holds no \*\.json scenario`)
	matches(t, "a bad timeout", expect(t, exitUsage, "test", "--module", module, "--timeout", "0s", good).stderr, `--timeout must be positive`)
}

// TestCacheDirKeepsCompiledCode: --cache-dir (WFHOST_CACHE_DIR) is where compiled modules go
// instead of the data directory, so several data directories can share one cache.
func TestCacheDirKeepsCompiledCode(t *testing.T) {
	cleanEnv(t)
	dataDir, cacheDir := t.TempDir(), t.TempDir()
	t.Setenv("WFHOST_DATA_DIR", dataDir)
	steps := filepath.Join("..", "..", "examples", "wasm", "scenarios", "steps-hourly.json")
	expect(t, 0, "test", "--no-crashes", "--cache-dir", cacheDir, "--module", testdata("examples_as.wasm"), steps)
	entries, err := os.ReadDir(cacheDir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("--cache-dir %s holds %d entries (%v), want the compiled module", cacheDir, len(entries), err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "test-cache")); !os.IsNotExist(err) {
		t.Fatalf("the data directory's own cache exists beside --cache-dir: %v", err)
	}
}
