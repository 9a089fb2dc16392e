package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
	"github.com/wfhost/wfhost/store/postgres"
)

// serveOn is serve on a store of the kind ("postgres" or "embedded"); it returns the store too.
func serveOn(t *testing.T, kind string) (string, store.Store) {
	t.Helper()
	ctx := context.Background()
	var st store.Store
	switch kind {
	case "postgres":
		pg, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: testenv.Schema(t, "wfhost_cli"), MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		if err := pg.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		st = pg
	default:
		em, err := embedded.Open(ctx, embedded.Config{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		st = em
	}
	eng, err := engine.New(engine.Config{Store: st, Runtime: testenv.Runtime(t), LeaseFor: 3 * time.Second, PollInterval: time.Second, MaxRetentionDays: 90})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Config{Service: eng.Service, Store: st, AdminToken: testAdminToken}))
	t.Cleanup(func() {
		srv.Close()
		eng.Stop()
		st.Close()
	})
	return srv.URL, st
}

// TestDeployThroughTheUpgradeGate: wfhost deploy --upgrade on both stores, over a run asleep
// before the step the renamed module renames and one waiting after it: strict refuses and
// names the report, check changes nothing, upgrade moves the first and pins the second, and
// wfhost upgrades get shows where the second diverges.
func TestDeployThroughTheUpgradeGate(t *testing.T) {
	for _, kind := range []string{"postgres", "embedded"} {
		t.Run(kind, func(t *testing.T) {
			cleanEnv(t)
			url, st := serveOn(t, kind)
			t.Setenv("WFHOST_URL", url)
			t.Setenv("WFHOST_TOKEN", newTenant(t, "acme", ""))
			expect(t, 0, "deploy", testdata("examples.wasm"))
			var asleep, waiting wire.Run
			_ = json.Unmarshal([]byte(expect(t, 0, "start", "onboarding", "--input", `{"email":"a@example.com","delayMs":3600000}`, "--json").stdout), &asleep)
			_ = json.Unmarshal([]byte(expect(t, 0, "start", "onboarding", "--input", `{"email":"b@example.com","delayMs":1,"verifyTimeoutMs":3600000}`, "--json").stdout), &waiting)
			for id, n := range map[string]int{asleep.ID: 2, waiting.ID: 4} {
				testenv.Await(t, 30*time.Second, func() error {
					steps, err := st.ListSteps(context.Background(), "acme", id)
					if err != nil || len(steps) != n || steps[n-1].Status == store.StepCompleted {
						return fmt.Errorf("run %s has %d steps (%v), want %d, the last unfinished", id, len(steps), err, n)
					}
					return nil
				})
			}
			renamed := testdata("examples_renamed.wasm")

			for _, bad := range []string{"bogus", "Check", "\xff", strings.Repeat("u", 5000)} {
				r := expect(t, exitUsage, "deploy", renamed, "--replace", "--upgrade", bad)
				if !strings.Contains(r.stderr, "--upgrade must be check, upgrade or strict") || len(r.stderr) > 300 {
					t.Fatalf("--upgrade %.20q: %s", bad, r.stderr)
				}
			}

			r := expect(t, exitConflict, "deploy", renamed, "--replace", "--upgrade=strict")
			matches(t, "strict refusal", r.stderr, `upgrade_refused|upgrade refused`, `1 of 2 open runs did not pass \(1 diverged`, `see: wfhost upgrades get [0-9a-f-]{36}\n$`)

			r = expect(t, 0, "deploy", renamed, "--replace", "--upgrade=check")
			matches(t, "check", r.stdout, `upgrade gate \(check\): 2 open runs checked`, `compatible\s+1`, `diverged\s+1`, `not deployed \(check\)`)

			var d wire.Deployed
			if err := json.Unmarshal([]byte(expect(t, 0, "deploy", renamed, "--replace", "--upgrade=upgrade", "--json").stdout), &d); err != nil {
				t.Fatal(err)
			}
			if d.Upgrade == nil || !d.Upgrade.Deployed || d.Upgrade.Moved != 1 || d.Upgrade.Pinned != 1 {
				t.Fatalf("upgrade: %+v", d.Upgrade)
			}
			for id, want := range map[string]string{asleep.ID: d.Digest, waiting.ID: ""} {
				run, err := st.GetRun(context.Background(), "acme", id)
				if err != nil {
					t.Fatal(err)
				}
				if (want == "") == (run.Digest == d.Digest) {
					t.Fatalf("run %s is on %.12s after the upgrade (the new module is %.12s)", id, run.Digest, d.Digest)
				}
			}

			r = expect(t, 0, "upgrades", "get", d.Upgrade.ID)
			t.Logf("wfhost upgrades get %s:\n%s", d.Upgrade.ID, r.stdout)
			matches(t, "report", r.stdout, waiting.ID+`\s+1\s+diverged\s+false\s+2\s+expected run send-welcome, reached run send-greeting`)
			if strings.Contains(r.stdout, asleep.ID) {
				t.Fatalf("the report lists a run that moved without --all:\n%s", r.stdout)
			}
			matches(t, "report --all", expect(t, 0, "upgrades", "get", d.Upgrade.ID, "--all").stdout, asleep.ID+`\s+1\s+compatible\s+true\s+1\s+stops at sleep welcome-delay`)

			expect(t, exitUsage, "upgrades", "get")
			for _, id := range []string{"not-a-uuid", "00000000-0000-4000-8000-000000000000", "../../v1/tenants", "\xff\xfe", strings.Repeat("9", 4000)} {
				expect(t, exitNotFound, "upgrades", "get", id)
			}
		})
	}
}
