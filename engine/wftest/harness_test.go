package wftest_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

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
// early and late events), each ending as the baseline did; the 30-day sleep passes at once.
func TestExampleScenariosPassEveryVariant(t *testing.T) {
	t.Parallel()
	opts := wftest.Options{Runtime: testenv.Runtime(t), Module: testenv.Fixture(t, "examples.wasm"), TempDir: t.TempDir()}
	for _, name := range []string{"onboarding-verified.json", "order-saga-declined.json"} {
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
		if base := res.Variants[0]; crashes != 2*int(base.Writes) || base.Writes == 0 {
			t.Errorf("%s: %d crash variants for a baseline of %d writes, want two a write", name, crashes, base.Writes)
		}
		t.Logf("%s: %d variants in %s; baseline %+v", name, len(res.Variants), res.Elapsed, res.Variants[0])
	}
}
