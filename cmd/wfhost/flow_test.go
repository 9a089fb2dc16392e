package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestStartPriorityAndFlow: start --priority is checked and sent; runs get says why a run
// under flow control waits, on which key, against which limit.
func TestStartPriorityAndFlow(t *testing.T) {
	cleanEnv(t)
	var st store.Store
	t.Setenv("WFHOST_URL", serveWith(t, func(c *api.Config) { st = c.Store.(store.Store) }))
	out := mustRun(t, "tenants", "create", "flow", "--admin-token", testAdminToken)
	t.Setenv("WFHOST_TOKEN", regexp.MustCompile(`secret\s+(wfh_\S+)`).FindStringSubmatch(out)[1])
	path := filepath.Join(testenv.Root(), "testdata", "examples.wasm")
	mustRun(t, "deploy", path)
	// Bind "steps" again with flow control, as a module declaring it would bind it.
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	digest := hex.EncodeToString(sum[:])
	if _, err := st.PutModule(t.Context(), store.Module{TenantID: "flow", Digest: digest, Size: len(wasm), ABIVersion: abi.Version, Bytes: wasm},
		[]store.Workflow{{TenantID: "flow", Name: "steps", Version: "1", Digest: digest, Flow: &abi.Flow{
			Concurrency: &abi.FlowConcurrency{Limit: 1}, Debounce: &abi.FlowDebounce{Key: "$.user", PeriodMs: 3_600_000}}}}, true); err != nil {
		t.Fatal(err)
	}

	matches(t, "start --priority 601", mustFail(t, "start", "steps", "--input", `{"user":"a"}`, "--priority", "601"), `--priority 601 out of range -600\.\.600`)
	matches(t, "start without a key", mustFail(t, "start", "steps", "--input", `{"n":1}`), `input has no value at \$\.user`, `HTTP 400`)

	first := runJSON[wire.Run](t, "start", "steps", "--input", `{"user":"a"}`)
	held := runJSON[wire.Run](t, "start", "steps", "--input", `{"user":"b"}`, "--priority", "30")
	if first.Status != wire.RunPending || held.Status != wire.RunPending {
		t.Fatalf("starts: %s, %s; want pending", first.Status, held.Status)
	}
	matches(t, "runs get (debounced)", mustRun(t, "runs", "get", "steps", first.ID),
		`waiting\s+debounced: a start of key "a" within 1h0m0s replaces its input`, `concurrency\s+key "", 1 of 1 running`)
	matches(t, "runs get (held)", mustRun(t, "runs", "get", "steps", held.ID),
		`waiting\s+for a concurrency slot: key "" has 1 of 1 running; it starts when one ends`, `priority\s+30 s`)
	if r := runJSON[wire.Run](t, "runs", "get", "steps", held.ID); r.Flow == nil || r.Flow.Waiting != "concurrency" || r.Flow.Priority != 30 {
		t.Fatalf("runs get --json: flow %+v", r.Flow)
	}
}
