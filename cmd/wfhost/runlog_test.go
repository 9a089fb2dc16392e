package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
)

// TestRunsLog: wfhost runs log on both stores: the whole log as a table, JSON and YAML;
// --follow printing entries as they come, one JSON line each, until the run ends; and the
// mistakes refused with their exit codes.
func TestRunsLog(t *testing.T) {
	for _, kind := range []string{"postgres", "embedded"} {
		t.Run(kind, func(t *testing.T) {
			cleanEnv(t)
			url, _ := serveOn(t, kind)
			t.Setenv("WFHOST_URL", url)
			token := newTenant(t, "acme", "")
			t.Setenv("WFHOST_TOKEN", token)
			expect(t, 0, "deploy", testdata("examples.wasm"))
			waiting := runOf(t, expect(t, 0, "start", "onboarding", "--input", `{"email":"ada@example.com","delayMs":1,"verifyTimeoutMs":600000}`, "--json"))
			awaitVerify(t, waiting.ID)
			matches(t, "runs log of a waiting run", expect(t, 0, "runs", "log", "onboarding", waiting.ID).stdout,
				`^SEQ\s+AT\s+KIND\s+HOST\s+DETAIL\n`, `(?m)^\d+\s+\S+\s+created\s`, `(?m)^\d+\s+\S+\s+suspended\s+\S+\s+\{.*"why":"wait"`)

			// Follow the run while a signal ends it: one JSON line per entry, ended last.
			followed := make(chan result, 1)
			go func() {
				followed <- invoke("", "runs", "log", "onboarding", waiting.ID, "--follow", "--interval", "20ms", "--json")
			}()
			// The signal goes over HTTP, not through a second run of the program: urfave/cli
			// keeps its help flag in a package variable, so two runs at once in one process race.
			req, err := http.NewRequest("POST", url+"/v1/workflows/onboarding/runs/"+waiting.ID+"/signals/verify",
				strings.NewReader(`{"userId":"`+onboardingUser("ada@example.com")+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("signal: %s", resp.Status)
			}
			var r result
			select {
			case r = <-followed:
			case <-time.After(60 * time.Second):
				t.Fatal("runs log --follow did not return after the run ended")
			}
			if r.code != 0 {
				t.Fatalf("runs log --follow exited %d: %s", r.code, r.stderr)
			}
			var kinds []string
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				var e wire.LogEntry
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatalf("--follow --json printed %q: %v", line, err)
				}
				kinds = append(kinds, e.Kind)
			}
			got := strings.Join(kinds, " ")
			if !strings.HasPrefix(got, "created ") || !strings.HasSuffix(got, " ended") || !strings.Contains(got, "event_delivered woken") {
				t.Fatalf("followed kinds %q: want created ... event_delivered woken ... ended", got)
			}

			var whole wire.LogPage
			if err := json.Unmarshal([]byte(expect(t, 0, "runs", "log", "onboarding", waiting.ID, "--json").stdout), &whole); err != nil {
				t.Fatal(err)
			}
			if len(whole.Entries) != len(kinds) {
				t.Errorf("runs log --json has %d entries, --follow printed %d", len(whole.Entries), len(kinds))
			}
			matches(t, "runs log -o yaml", expect(t, 0, "runs", "log", "onboarding", waiting.ID, "-o", "yaml").stdout, `(?m)^  - seq: \d+$`, `(?m)^    kind: ended$`)
			// Following a run that has ended prints its log and returns.
			matches(t, "runs log --follow of an ended run", expect(t, 0, "runs", "log", "onboarding", waiting.ID, "--follow").stdout, `(?m)\sended\s`)

			expect(t, exitUsage, "runs", "log", "onboarding")
			expect(t, exitUsage, "runs", "log", "onboarding", waiting.ID, "--interval", "0s")
			expect(t, exitUsage, "runs", "log", "onboarding", waiting.ID, "--interval", "soon")
			expect(t, exitUsage, "runs", "log", "onboarding", waiting.ID, "--follow=maybe")
			expectJSONError(t, exitNotFound, "not_found", 404, "runs", "log", "poll", waiting.ID)
			expectJSONError(t, exitNotFound, "not_found", 404, "runs", "log", "onboarding", "00000000-0000-4000-8000-000000000000")
			expectJSONError(t, exitNotFound, "not_found", 404, "runs", "log", "onboarding", "\xff\xfe")
			expectJSONError(t, exitNotFound, "not_found", 404, "runs", "log", "onboarding", strings.Repeat("a", 10000))
			t.Setenv("WFHOST_TOKEN", newTenant(t, "other", ""))
			expectJSONError(t, exitNotFound, "not_found", 404, "runs", "log", "onboarding", waiting.ID)
		})
	}
}
