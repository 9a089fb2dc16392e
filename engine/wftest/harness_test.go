package wftest_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/engine/wftest"
	"github.com/wfhost/wfhost/internal/testenv"
)

func scenario(t *testing.T, name string) *wftest.Scenario {
	t.Helper()
	sc, err := wftest.Load(filepath.Join("..", "..", "examples", "wasm", "scenarios", name))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestExampleScenariosPassEveryVariant: the Go examples' scenarios pass on the baseline and
// on every variant (a crash at each store write, before and after its commit; duplicated,
// early and late events), each ending as the baseline did; the 30-day sleep passes at once
// (the baseline's clock moves 721 hours, in real seconds).
func TestExampleScenariosPassEveryVariant(t *testing.T) {
	t.Parallel()
	opts := wftest.Options{Runtime: testenv.Runtime(t), Module: testenv.Fixture(t, "examples.wasm"), TempDir: t.TempDir()}
	// The onboarding's crash variants (two for each of its ~40 writes) are make
	// test/scenarios' to run: under -race on a shared machine they take minutes.
	for _, name := range []string{"order-saga-declined.json", "onboarding-verified.json"} {
		opts := opts
		opts.NoCrashes = name == "onboarding-verified.json"
		res, err := wftest.Run(context.Background(), opts, scenario(t, name))
		if err != nil {
			t.Fatal(err)
		}
		crashes := 0
		for _, v := range res.Variants {
			if v.Problem != "" {
				t.Errorf("%s, %s: %s", name, v.Name, v.Problem)
			}
			if strings.HasPrefix(v.Name, "crash") {
				crashes++
			}
		}
		if base := res.Variants[0]; !opts.NoCrashes && (crashes != 2*int(base.Writes) || base.Writes == 0) {
			t.Errorf("%s: %d crash variants for a baseline of %d writes, want two a write", name, crashes, base.Writes)
		}
		// The clock may move a second or so more where the engine waits on a timer of its own.
		if d, err := time.ParseDuration(res.Variants[0].VirtualTime); name == "onboarding-verified.json" && (err != nil || d < 721*time.Hour || d > 722*time.Hour) {
			t.Errorf("the baseline's clock moved %s, want the 30-day sleep and the hour to the event", res.Variants[0].VirtualTime)
		}
		t.Logf("%s: %d variants in %s; baseline %+v", name, len(res.Variants), res.Elapsed, res.Variants[0])
	}
}
