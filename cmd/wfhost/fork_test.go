package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestRunsFork: on both stores, runs fork copies a run waiting for its verification while the
// run still waits: the fork replays the steps before the wait, waits for its own signal and
// completes with it, and the source is still waiting, untouched. A cut after the wait, an
// unknown run, another version that does not exist and hostile flags are refused.
func TestRunsFork(t *testing.T) {
	for _, kind := range []string{"postgres", "embedded"} {
		t.Run(kind, func(t *testing.T) {
			cleanEnv(t)
			url, st := serveOn(t, kind)
			t.Setenv("WFHOST_URL", url)
			t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
			ctx := context.Background()
			expect(t, 0, "deploy", testdata("examples.wasm"))
			source := runOf(t, expect(t, 0, "start", "onboarding", "--input", `{"email":"f@example.com","delayMs":1,"verifyTimeoutMs":3600000}`, "--json"))
			waiting := func(id string) error {
				steps, err := st.ListSteps(ctx, "acme", id)
				if err != nil || len(steps) != 4 || steps[3].Status != store.StepWaiting {
					return fmt.Errorf("run %s has %d steps (%v), want 4, the last waiting", id, len(steps), err)
				}
				return nil
			}
			testenv.Await(t, 30*time.Second, func() error { return waiting(source.ID) })

			r := expect(t, 0, "runs", "fork", "onboarding", source.ID)
			matches(t, "the fork", r.stdout, `status\s+pending`, `restarts\s+`+source.ID)
			fork := runOf(t, expect(t, 0, "runs", "fork", "onboarding", source.ID, "--json"))
			if fork.RestartedFrom != source.ID || fork.ID == source.ID {
				t.Fatalf("fork %+v, want a new run linked to %s", fork, source.ID)
			}
			testenv.Await(t, 30*time.Second, func() error { return waiting(fork.ID) })
			kept, err := st.ListSteps(ctx, "acme", fork.ID)
			if err != nil {
				t.Fatal(err)
			}
			src, err := st.ListSteps(ctx, "acme", source.ID)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				// A rerun keeps the start time and may write the same output; it writes its own
				// completion time.
				if kept[i].Key != src[i].Key || !kept[i].StartedAt.Equal(src[i].StartedAt) || string(kept[i].Output) != string(src[i].Output) ||
					kept[i].CompletedAt == nil || src[i].CompletedAt == nil || !kept[i].CompletedAt.Equal(*src[i].CompletedAt) {
					t.Fatalf("fork entry %d %+v, want the source's %+v (replayed, not run again)", i, kept[i], src[i])
				}
			}
			var user struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(src[0].Output, &user); err != nil || user.ID == "" {
				t.Fatalf("create-user's output %s: %v", src[0].Output, err)
			}
			expect(t, 0, "signal", "onboarding", fork.ID, "verify", "--payload", `{"userId":"`+user.ID+`","via":"fork"}`)
			awaitCompleted(t, "onboarding", fork.ID)
			matches(t, "the signalled fork", expect(t, 0, "runs", "get", "onboarding", fork.ID).stdout, `verified via fork`)
			if err := waiting(source.ID); err != nil {
				t.Fatalf("the source after its fork completed: %v", err)
			}
			if got := runJSON[wire.Run](t, "runs", "get", "onboarding", source.ID); got.Status != wire.RunRunning {
				t.Fatalf("the source ended %s", got.Status)
			}

			// A what-if on the same journal with another input: the fork is the caller's to keep
			// compatible, and it is a run like any other (here it reaches its own wait).
			other := runOf(t, expect(t, 0, "runs", "fork", "onboarding", source.ID, "--from-step", "send-welcome", "--json"))
			testenv.Await(t, 30*time.Second, func() error { return waiting(other.ID) })

			expectJSONError(t, exitOther, "invalid_request", 400, "runs", "fork", "onboarding", source.ID, "--from-step", "send-nudge")
			expectJSONError(t, exitOther, "invalid_request", 400, "runs", "fork", "onboarding", source.ID, "--from-step", "\xff\xfe")
			expectJSONError(t, exitOther, "invalid_request", 400, "runs", "fork", "onboarding", source.ID, "--from-step", strings.Repeat("s", 5000))
			expectJSONError(t, exitNotFound, "not_found", 404, "runs", "fork", "onboarding", source.ID, "--version", "9")
			expectJSONError(t, exitNotFound, "not_found", 404, "runs", "fork", "onboarding", "00000000-0000-4000-8000-000000000000")
			expectJSONError(t, exitUsage, "usage", 0, "runs", "fork", "onboarding", source.ID, "--input", "{not json")
			expect(t, exitUsage, "runs", "fork", "onboarding")
		})
	}
}
