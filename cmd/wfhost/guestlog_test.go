package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/api/wire"
)

// TestRunsLogs: wfhost runs logs on both stores: what the run's guest logged, as a table and
// as JSON, and the mistakes refused with their exit codes.
func TestRunsLogs(t *testing.T) {
	for _, kind := range []string{"postgres", "embedded"} {
		t.Run(kind, func(t *testing.T) {
			cleanEnv(t)
			url, _ := serveOn(t, kind)
			t.Setenv("WFHOST_URL", url)
			t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
			expect(t, 0, "deploy", testdata("examples.wasm"))
			run := runOf(t, expect(t, 0, "start", "steps", "--input", `{"n":2,"sleepMs":10}`, "--wait", "--json"))
			matches(t, "runs logs", expect(t, 0, "runs", "logs", "steps", run.ID).stdout,
				`^AT\s+LEVEL\s+STEP\s+MESSAGE\n`, `(?m)^\S+\s+info\s+s\s+step ran index=0 attempt=1$`, `(?m)^\S+\s+info\s+s#1\s+step ran index=1 attempt=1$`)
			var page wire.GuestLogPage
			if err := json.Unmarshal([]byte(expect(t, 0, "runs", "logs", "steps", run.ID, "--json").stdout), &page); err != nil {
				t.Fatal(err)
			}
			if len(page.Lines) != 2 || page.Lines[1].Step != "s#1" {
				t.Fatalf("runs logs --json: %+v", page)
			}

			expect(t, exitUsage, "runs", "logs", "steps")
			expect(t, exitUsage, "runs", "logs", "steps", run.ID, "extra")
			expectJSONError(t, exitNotFound, "not_found", 404, "runs", "logs", "onboarding", run.ID)
			expectJSONError(t, exitNotFound, "not_found", 404, "runs", "logs", "steps", "00000000-0000-4000-8000-000000000000")
			expectJSONError(t, exitNotFound, "not_found", 404, "runs", "logs", "steps", "\xff\xfe")
			expectJSONError(t, exitNotFound, "not_found", 404, "runs", "logs", "steps", strings.Repeat("a", 10000))
			t.Setenv("WFHOST_TOKEN", newTenant(t, "other", ""))
			expectJSONError(t, exitNotFound, "not_found", 404, "runs", "logs", "steps", run.ID)
		})
	}
}
